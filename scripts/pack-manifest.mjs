// The package.json a tarball carries: the checkout's, without the scripts
// only a checkout runs. `prepare` builds dist/ for `npm ci` in a checkout,
// and npm never runs it for a tarball, yet npm 11 names it in its
// `install-scripts` notice when the tarball is installed (`npm install -g
// actors-*.tgz`). So `prepack` builds, then calls this with `strip`, and
// `postpack` with `restore` (the way pinst keeps husky's postinstall out of
// a published package).
//   node scripts/pack-manifest.mjs strip|restore   (cwd: the package root)
import {existsSync, readFileSync, renameSync, writeFileSync} from 'node:fs'

const MANIFEST = 'package.json'
/** The checkout's own package.json while a pack is under way, byte for byte. */
const KEPT = '.package.json.packing'
/** Lifecycle scripts of a checkout: building it (prepare) and this very dance. */
const CHECKOUT_ONLY = ['prepare', 'prepack', 'postpack']

const step = process.argv[2]
if (step === 'strip') {
  // A pack stopped before its postpack left the original aside: put it back first, never lose it.
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST)
  const text = readFileSync(MANIFEST, 'utf8')
  const manifest = JSON.parse(text)
  for (const name of CHECKOUT_ONLY) delete manifest.scripts?.[name]
  writeFileSync(KEPT, text)
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`)
} else if (step === 'restore') {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST)
} else {
  console.error('usage: node scripts/pack-manifest.mjs strip|restore')
  process.exit(2)
}
