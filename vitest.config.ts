// Plain CommonJS object (package.json has no "type": "module"), so Vite's config loader does not warn about
// ESM syntax in a CommonJS file. Equivalent to defineConfig({ test: {...} }).
module.exports = {
  test: {
    include: ['__test__/**/*.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
}
