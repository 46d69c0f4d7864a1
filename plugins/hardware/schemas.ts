import { Type, type Static, type TSchema } from 'typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const CpuView = Type.Object({
  manufacturer: Type.String(),
  brand: Type.String(),
  cores: Type.Integer({ description: 'Logical cores' }),
  physical_cores: Type.Integer(),
  speed_ghz: Nullable(Type.Number({ description: 'Base clock; null where the platform does not report it' })),
});
export type CpuView = Static<typeof CpuView>;

export const MemoryView = Type.Object({
  total_bytes: Type.Integer(),
  available_bytes: Type.Integer({ description: 'Read at each request' }),
});
export type MemoryView = Static<typeof MemoryView>;

export const GpuView = Type.Object({
  vendor: Type.String(),
  model: Type.String(),
  vram_bytes: Nullable(Type.Integer({ description: 'Null where unknown or shared with the system' })),
});
export type GpuView = Static<typeof GpuView>;

export const OsView = Type.Object({
  platform: Type.String(),
  distro: Type.String(),
  release: Type.String(),
  arch: Type.String(),
});
export type OsView = Static<typeof OsView>;

export const JetsonView = Type.Object({
  model: Nullable(Type.String({ description: 'From /proc/device-tree/model' })),
  l4t_release: Nullable(Type.String({ description: 'From /etc/nv_tegra_release, e.g. 36.4.0' })),
});
export type JetsonView = Static<typeof JetsonView>;

export const ProfileView = Type.Object({
  name: Type.String({ description: 'The firmware-profiles/ preset in force (e.g. jetson-orin-nano, x86-small-server), or generic' }),
  reason: Type.String({ description: 'What it was chosen on: the board and L4T release, or the architecture, cores and memory' }),
  applied: Type.Record(Type.String(), Type.String(), { description: 'The defaults it set (variables set explicitly are not listed: they win)' }),
});
export type ProfileView = Static<typeof ProfileView>;

export const HardwareView = Type.Object(
  {
    cpu: CpuView,
    memory: MemoryView,
    gpus: Type.Array(GpuView, { description: 'Empty when no GPU was found' }),
    os: OsView,
    jetson: Nullable(JetsonView),
    node_version: Type.String({ description: 'Node.js version running the service, e.g. v20.19.0' }),
    profile: ProfileView,
  },
  { $id: 'Hardware' },
);
export type HardwareView = Static<typeof HardwareView>;
