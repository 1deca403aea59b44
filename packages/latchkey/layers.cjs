/**
 * The library's layers, checked by `npm run lint` (dependency-cruiser). Imports point down only:
 *
 *   composition root   index.ts, latchkey.ts, facade/ (wire everything; the project imports these)
 *   adapters           http/ (pages, headless, api; their shared kit and social routes), cli/
 *   flows              <feature>/flows/, login/ (one module per journey: the rules)
 *   domain             <feature>/ (users, passwords, authenticators, ...), deps.ts
 *   ports              <feature>/model.ts and ports.ts, store.ts: entities and the interfaces
 *                      the implementations fulfil
 *   implementations    storage/, cache/, mail/, templates/: they know the ports, never the rules
 *   base               core/ (pure building blocks) and config/ (settings) under everything
 *
 * and never in a circle. docs/architecture.md says where each kind of code goes and why. The
 * rules are built from the source root so that a test (test/layers.test.ts) can hold a tree of
 * deliberately bad fixtures to them and see each rule fire. .dependency-cruiser.cjs (the
 * repository's lint configuration) applies them to src/.
 */

/** The features: each owns its model and ports, its domain code, and its flows/. */
const FEATURES = '(account|sessions|mfa|tokens|socialaccount|admin|django-import)';

/** @param {string} src the source root, relative to where dependency-cruiser runs */
function layerRules(src) {
  const at = (pattern) => `^${src}/${pattern}`;
  const testFile = '\\.test\\.ts$';
  const layer = {
    base: at('(core|config)/'),
    ports: [at("[^/]+/(model|ports)\\.ts$"), at('store\\.ts$')],
    implementations: at('(storage|cache|mail|templates)/'),
    domain: [at(`${FEATURES}/`), at('deps\\.ts$')],
    flows: [at(`${FEATURES}/flows/`), at('login/')],
    adapters: at('(http|cli)/'),
    root: at('((index|latchkey)\\.ts$|facade/)'),
    testing: at('testing/'),
  };
  const notPorts = layer.ports;
  const notFlows = layer.flows;
  return [
    {
      name: 'no-circular',
      comment: 'An import cycle ties modules into one knot that can only be understood, tested and changed together.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-only-core',
      comment: 'core/ holds pure building blocks (errors, crypto, clock, rate limiting): everything may use them, so they may use nothing above.',
      severity: 'error',
      from: { path: at('core/'), pathNot: testFile },
      to: { path: `^${src}/`, pathNot: at('core/') },
    },
    {
      name: 'config-imports-only-core',
      comment: 'config/ is read by every layer; the values settings choose among live in config/choices.ts, not in the features that use them.',
      severity: 'error',
      from: { path: at('config/'), pathNot: testFile },
      to: { path: `^${src}/`, pathNot: layer.base },
    },
    {
      name: 'ports-only-describe',
      comment: 'A model.ts or ports.ts describes entities and interfaces; it may name other ports and base types, nothing that does work.',
      severity: 'error',
      from: { path: layer.ports },
      to: { path: `^${src}/`, pathNot: [...layer.ports, layer.base] },
    },
    {
      name: 'implementations-know-only-ports',
      comment: 'storage/, cache/, mail/ and templates/ implement ports; a rule of a feature (normalising an address, say) moves down to core/ or into the model instead.',
      severity: 'error',
      from: { path: layer.implementations, pathNot: [...notPorts, testFile] },
      to: { path: [...layer.domain, ...layer.flows, layer.adapters, layer.root], pathNot: notPorts },
    },
    {
      name: 'domain-below-flows',
      comment: 'Domain code (users, passwords, authenticators, tokens) is what flows compose; it never calls a flow, an adapter or a concrete store.',
      severity: 'error',
      from: { path: layer.domain, pathNot: [...notFlows, ...notPorts, testFile] },
      to: { path: [...layer.flows, layer.adapters, layer.root, layer.implementations], pathNot: notPorts },
    },
    {
      name: 'flows-below-adapters',
      comment: 'Flows take (deps, input) and return results: they never see a request, a reply or a concrete store.',
      severity: 'error',
      from: { path: layer.flows, pathNot: testFile },
      to: { path: [layer.adapters, layer.root, layer.implementations], pathNot: notPorts },
    },
    {
      name: 'adapters-below-the-root',
      comment: 'HTTP adapters are wired by the composition root (latchkey.ts) and never reach into it or into a concrete store.',
      severity: 'error',
      from: { path: at('http/'), pathNot: testFile },
      to: { path: [layer.root, at('cli/'), layer.implementations], pathNot: notPorts },
    },
    {
      name: 'front-doors-stay-apart',
      comment: 'The pages, the headless API and the token API share glue through http/kit/ and the social sign-in routes through http/social/ only; what one door needs from another belongs there or in a flow.',
      severity: 'error',
      from: { path: at('http/(pages|headless|api|admin)/'), pathNot: testFile },
      to: { path: at('http/(pages|headless|api|admin)/'), pathNot: at('http/$1/') },
    },
    {
      name: 'product-code-without-test-support',
      comment: 'testing/ (test clients, fixtures, the conformance suites) is for tests; the product never loads it.',
      severity: 'error',
      from: { path: `^${src}/`, pathNot: [layer.testing, testFile, '\\.child\\.ts$'] },
      to: { path: layer.testing },
    },
  ];
}

module.exports = { layerRules };
