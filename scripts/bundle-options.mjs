// The esbuild options every bundle of ours shares: ESM for node and deno, native addons and
// piscina left to node_modules (addons cannot be inlined; piscina starts its own worker
// script from beside its code), and so are bullmq and ioredis (inlined, their 1.5 MB were
// parsed at every start of every command; only the --queue commands import them),
// `require` and the CommonJS names made available in ESM.
export function bundleOptions(buildId) {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['lmdb', 'cbor-extract', '@napi-rs/nice', 'msgpackr-extract', 'piscina', 'bullmq', 'ioredis'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    define: { __dirname: 'import.meta.dirname', __filename: 'import.meta.filename', __LANEWARD_BUILD_ID__: JSON.stringify(buildId) },
    logLevel: 'warning',
  };
}

/**
 * The CLI's options: the same bundle as CommonJS, so that it can be compiled from V8's code
 * cache (see scripts/cached-start.cjs; node 20 has no code cache for an ES module). The
 * ESM names map to CommonJS's own, and a dynamic import of an external package is a
 * require (a script compiled by node:vm has no module loader for import()).
 */
export function cliBundleOptions(buildId) {
  const { banner: _banner, define: _define, ...shared } = bundleOptions(buildId);
  return {
    ...shared,
    format: 'cjs',
    supported: { 'dynamic-import': false },
    banner: { js: "var __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__import_meta_url', 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename', __LANEWARD_BUILD_ID__: JSON.stringify(buildId) },
  };
}
