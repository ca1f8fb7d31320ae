/** Calls `onQuit` on q or Escape (Ctrl-C is Ink's own exit). Inactive when stdin cannot do raw mode. */
import {useInput, useStdin} from 'ink'

export function QuitKeys({onQuit}: {onQuit: () => void}) {
  const {isRawModeSupported} = useStdin()
  useInput(
    (input, key) => {
      // Keys typed faster than a read arrive as one chunk ("qecho ..."): a q anywhere in it is a press of q.
      if (input.includes('q') || key.escape) onQuit()
    },
    {isActive: isRawModeSupported},
  )
  return null
}
