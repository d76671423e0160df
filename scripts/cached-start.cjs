// The start of dist/laneward.cjs: scripts/build.mjs writes this file with the CLI's whole
// CommonJS bundle, as a string literal, in place of the body's placeholder below, and the
// build's id in place of the id's.
//
// Why the bundle is a string: a script's text is parsed before any of it runs, and
// pre-parsing the bundle's megabyte of functions was the largest part of every start.
// Scanning a string is cheap; the bundle is then compiled here from V8's code cache for
// this runtime's V8, made by the build (beside this file, named after the V8 version).
// Without one (another node, deno, a cache that does not match this text or these flags,
// which V8 checks and rejects), it is compiled from its text, as any script is.
//
// The file is a script and an ES module at once: node and deno run it as CommonJS by its
// name, but deno runs it by the name it was given, and npm's bin link (a symlink named
// `laneward`) is an ES module to deno. So nothing here is CommonJS-only syntax.
'use strict';
{
  const body = __LANEWARD_BODY__;
  const start = (require, module, file, dir) => {
    const { closeSync, constants, fstatSync, openSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
    const { Script } = require('node:vm');
    const { wrap } = require('node:module');
    const cacheFile = `${file}.${process.versions.v8}.cache`;
    // Read only when it is a regular file of a cache's size: a FIFO there (opened without
    // blocking), a link to a device or a huge file is no cache, never a hang. By hand, not
    // with main/fs/read-bounded.ts: that is inside the body, which is not compiled yet.
    let cachedData;
    try {
      const fd = openSync(cacheFile, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const stat = fstatSync(fd);
        if (stat.isFile() && stat.size <= 256 * 1024 * 1024) cachedData = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      cachedData = undefined;
    }
    const script = new Script(wrap(body), { filename: file, cachedData });
    // The build's warm-up: the cache is made after a command ran, so that the functions it
    // compiled are in it too; only for this build's id, written whole.
    if (process.env.LANEWARD_CODE_CACHE === __LANEWARD_BUILD_ID__) {
      process.once('exit', () => {
        const temp = `${cacheFile}.${process.pid}.tmp`;
        try {
          writeFileSync(temp, script.createCachedData());
          renameSync(temp, cacheFile);
        } catch {
          // A dist/ that cannot be written keeps no cache; the build says so, the command's exit stands.
        }
      });
    }
    script.runInThisContext()(module.exports, require, module, file, dir);
  };
  if (typeof require === 'function') start(require, module, __filename, __dirname);
  else {
    // An ES module (deno, by a name without .cjs): the file it names, and a require from there.
    const deno = globalThis.Deno;
    void Promise.all([import('node:module'), import('node:path'), import('node:url')]).then(([{ createRequire }, { dirname }, { fileURLToPath }]) => {
      const file = deno.realPathSync(fileURLToPath(deno.mainModule));
      start(createRequire(file), { exports: {} }, file, dirname(file));
    });
  }
}
