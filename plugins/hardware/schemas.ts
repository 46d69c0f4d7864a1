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

export const HardwareView = Type.Object(
  {
    cpu: CpuView,
    memory: MemoryView,
    gpus: Type.Array(GpuView, { description: 'Empty when no GPU was found' }),
    os: OsView,
    jetson: Nullable(JetsonView),
    node_version: Type.String({ description: 'Node.js version running the service, e.g. v20.19.0' }),
  },
  { $id: 'Hardware' },
);
export type HardwareView = Static<typeof HardwareView>;
