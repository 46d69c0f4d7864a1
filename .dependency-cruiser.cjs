/**
 * The boundaries between the service's rooms, checked by `npm run boundaries` (part of `npm test`).
 * A plugin reaches another only through its index.ts (what it exports there is its public surface);
 * plugin folders form no cycle; core and native/ stand below the plugins.
 */
module.exports = {
  forbidden: [
    {
      name: 'plugin-internals',
      comment: "A plugin imports another plugin only through that plugin's index.ts (its public surface: types and service).",
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/[^/]+/', pathNot: ['^plugins/$1/', '^plugins/[^/]+/index\\.ts$'] },
    },
    {
      name: 'plugin-folder-cycles',
      comment: 'No cycle between plugin folders: the path from upload to answer crosses each plugin once.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^plugins/[^/]+' },
      to: { path: '^plugins/[^/]+', circular: true },
    },
    {
      name: 'core-imports-no-plugin',
      comment: 'core/ is what plugins build on; only the app builder reads the boot order.',
      severity: 'error',
      from: { path: '^core/', pathNot: '^core/app\\.ts$' },
      to: { path: '^plugins/' },
    },
    {
      name: 'core-app-reads-only-the-boot-order',
      comment: 'The app builder registers the plugins from the boot list, nothing else of theirs.',
      severity: 'error',
      from: { path: '^core/app\\.ts$' },
      to: { path: '^plugins/', pathNot: '^plugins/boot-order\\.ts$' },
    },
    {
      name: 'cli-reaches-plugins-through-index',
      comment: "The hearth command (appliance/cli) opens the service's state without the app: only through a plugin's public surface.",
      severity: 'error',
      from: { path: '^appliance/cli/' },
      to: { path: '^plugins/', pathNot: '^plugins/[^/]+/index\\.ts$' },
    },
    {
      name: 'no-plugin-imports-the-cli',
      comment: 'The command line stands above the service: nothing in core, plugins or native imports it.',
      severity: 'error',
      from: { path: '^(core|plugins|native)/' },
      to: { path: '^appliance/cli/' },
    },
    {
      name: 'native-imports-no-plugin',
      comment: 'native/ wraps the bindings behind typed interfaces; it knows nothing of the features.',
      severity: 'error',
      from: { path: '^native/' },
      to: { path: '^plugins/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
