'use strict'

/**
 * Chooses the implementation: the native addon through the generated loader, or the
 * JavaScript fallback when no binary fits this platform (or `BSON2JSON_FORCE_FALLBACK=1`).
 */

let warned = false

/**
 * @returns {{ name: 'native' | 'fallback', binding: any, loadError?: Error }}
 */
function loadBackend() {
  if (process.env.BSON2JSON_FORCE_FALLBACK === '1') {
    return useFallback(undefined, 'BSON2JSON_FORCE_FALLBACK=1')
  }
  try {
    return { name: 'native', binding: require('../binding.js') }
  } catch (err) {
    return useFallback(err, `no prebuilt binary for ${process.platform}-${process.arch}`)
  }
}

function useFallback(loadError, why) {
  let fallback
  try {
    fallback = require('./fallback.js')
  } catch (fallbackError) {
    const e = new Error(
      `bson2json: cannot load the native addon (${why}) and the JavaScript fallback is unavailable: ${fallbackError.message}`,
    )
    e.cause = loadError || fallbackError
    throw e
  }
  if (!warned) {
    warned = true
    process.emitWarning(
      `bson2json is using its JavaScript fallback (${why}); it is much slower than the native addon.` +
        (loadError ? ` Native load error: ${loadError.message.split('\n')[0]}` : ''),
      { code: 'BSON2JSON_FALLBACK' },
    )
  }
  return { name: 'fallback', binding: fallback, loadError }
}

module.exports = { loadBackend }
