export * from 'bson2json-wasm32-wasi'
