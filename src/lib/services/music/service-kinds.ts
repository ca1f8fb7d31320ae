/**
 * The kinds of service this build ships, which the front ends (`actors
 * control`, the MCP control tool) hand to the control router. The router
 * itself knows no service by name: a kind says which dirs are its own, what
 * to check before sending, and what `status` says when no service runs
 * (signals/standalone.ts). The first kind answers `status` of a directory no
 * service has used.
 */
import type {ServiceKind} from '../../kernel/signals/standalone.js'
import {playbackServiceKind} from './playback-kind.js'

export const SERVICE_KINDS: readonly ServiceKind[] = [playbackServiceKind]
