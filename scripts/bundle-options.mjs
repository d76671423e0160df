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
