// `npm run build:wasi` runs this first: the Rust target the WASI build needs, added with rustup
// when it is missing (rustc says "can't find crate for `core`" without it). Without rustup, says
// what to install and exits 1.
import { execFileSync } from 'node:child_process'

const TARGET = 'wasm32-wasip1-threads'
const run = (args) => execFileSync('rustup', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
let installed
try {
  installed = run(['target', 'list', '--installed']).split('\n')
} catch {
  console.error(`build:wasi needs the Rust target ${TARGET}: install it with \`rustup target add ${TARGET}\` (rustup not found)`)
  process.exit(1)
}
if (!installed.includes(TARGET)) {
  console.error(`build:wasi: rustup target add ${TARGET}`)
  execFileSync('rustup', ['target', 'add', TARGET], { stdio: 'inherit' })
}
