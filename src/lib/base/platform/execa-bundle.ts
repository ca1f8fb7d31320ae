/**
 * The parts of execa the kernel uses: dist/execa.cjs, a bundle of its own
 * (about 117 KB minified) that only the commands starting a child process
 * off the hot paths evaluate (players, ffprobe, Slurm's commands, `actors
 * lock exec`, the `ps` fallbacks where /proc is missing). Only
 * src/lib/base/platform/execa.ts loads it. Add a name here when a caller needs one
 * more.
 */
export {execa, execaSync} from 'execa'
