// `npm run lint` checks the library's layers with dependency-cruiser: the rules and why they are
// so are in packages/latchkey/layers.cjs.
const { layerRules } = require('./packages/latchkey/layers.cjs');

module.exports = {
  forbidden: layerRules('packages/latchkey/src'),
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through types is still a cycle for whoever reads the code.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
