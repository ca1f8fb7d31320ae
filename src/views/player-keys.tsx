/** Hands every key press to `onKey` (inactive when stdin cannot do raw mode). */
import {useInput, useStdin, type Key} from 'ink'

export function PlayerKeys({onKey}: {onKey: (input: string, key: Key) => void}) {
  const {isRawModeSupported} = useStdin()
  useInput(onKey, {isActive: isRawModeSupported})
  return null
}
