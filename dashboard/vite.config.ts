// The bundle kobo embeds (service/build.rs lists dashboard/dist for service/src/http/dashboard.rs):
// one script and one style sheet named by their content's hash (so a browser keeps them for a
// year and a new build is a new name), each also compressed ahead of time (`.br`, `.gz`, what
// kobo sends to a browser that accepts it), no inline script (the CSP forbids it), and the
// same bytes from the same sources (.ci/dashboard rebuilds and compares).
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

/** Text files at least this large get their compressed twins. */
const COMPRESS_FROM = 512;

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the bundle (index.html, the
 * script, the style sheet, the icon): brotli at its best quality and gzip at level 9, made once
 * at build time rather than on every request. gzip's header carries no time or name, so the
 * same input gives the same bytes.
 */
function precompress(): Plugin {
  return {
    name: "kobo-precompress",
    apply: "build",
    enforce: "post",
    generateBundle(_options, bundle) {
      for (const [fileName, output] of Object.entries(bundle)) {
        if (!/\.(html|js|css|svg)$/.test(fileName)) continue;
        const content = output.type === "chunk" ? output.code : output.source;
        const bytes = typeof content === "string" ? Buffer.from(content) : Buffer.from(content);
        if (bytes.length < COMPRESS_FROM) continue;
        const brotli = brotliCompressSync(bytes, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          },
        });
        this.emitFile({ type: "asset", fileName: `${fileName}.br`, source: brotli });
        this.emitFile({ type: "asset", fileName: `${fileName}.gz`, source: gzipSync(bytes, { level: 9 }) });
      }
    },
  };
}

export default defineConfig({
  base: "/dashboard/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  plugins: [precompress()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: false,
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      output: {
        entryFileNames: "assets/dashboard-[hash].js",
        chunkFileNames: "assets/dashboard-[name]-[hash].js",
        assetFileNames: "assets/dashboard-[hash][extname]",
        inlineDynamicImports: true,
      },
    },
  },
  server: {
    // `npm run dev`: the app from Vite, the API from a local kobo (KOBO_URL, default the demo's).
    proxy: {
      "/api": process.env.KOBO_URL ?? "http://127.0.0.1:8080",
    },
  },
});
