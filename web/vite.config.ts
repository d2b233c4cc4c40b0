import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

/**
 * Writes .br and .gz siblings of every built asset, which the server hands to browsers that accept them
 * (@fastify/static `preCompressed`): compressed once at build time instead of on every request.
 */
function precompressAssets(): Plugin {
  let outDir = '';
  return {
    name: 'bulwark-precompress-assets',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    writeBundle() {
      const assets = join(outDir, 'assets');
      for (const name of readdirSync(assets)) {
        if (!/\.(js|css|svg|json)$/.test(name)) continue;
        const content = readFileSync(join(assets, name));
        writeFileSync(join(assets, `${name}.gz`), gzipSync(content, { level: 9 }));
        writeFileSync(join(assets, `${name}.br`), brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

/** The web console: `npm run build` writes it to dist/console, which the server serves at `/`. */
export default defineConfig({
  root: webRoot,
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: join(webRoot, '..', 'dist', 'console'),
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle: nothing is worth a second round trip on an appliance's own network.
    modulePreload: false,
    assetsInlineLimit: 0,
    reportCompressedSize: true,
    sourcemap: false,
  },
  plugins: [precompressAssets()],
  server: {
    // `npx vite --config web/vite.config.ts` against a running API on :8080
    proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true }, '/ws': { target: 'ws://127.0.0.1:8080', ws: true } },
  },
});
