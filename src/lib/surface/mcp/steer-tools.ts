/**
 * The steering tools of `actors mcp` (SPEC: Generations and steering): `send`,
 * `rerun` and `close`, over the same kernel functions as `actors send` and `actors
 * rerun`, returning their --json documents.
 *
 * Both may start a new generation of the Run (send to a finished Run resumes
 * it), so both obey the launch policy for the Run's Recipe: a server that may
 * not launch a Recipe (or ad-hoc commands) may not steer or restart its Runs
 * either; `close` retires such a Run, so it obeys the same rule. Checking before the state is read keeps the rule simple and race-free.
 */
import {existsSync} from 'node:fs'
import {dirname} from 'node:path'
import * as z from 'zod/v4'
import {loadRecipeFile} from '../../kernel/recipes/load.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {requireRun} from '../../kernel/runs/store.js'
import {MAX_MESSAGE_BYTES} from '../../kernel/runs/inbox.js'
import {startNextGeneration} from '../../services/steer/next-generation.js'
import {sendMessage} from '../../services/steer/send.js'
import {closeRun} from '../../services/control/close.js'
import {SERVICE_KINDS} from '../../services/music/service-kinds.js'
import {enforceRunOwner} from './owner-guard.js'
import {enforceLaunchPolicy, type McpPolicy} from './policy.js'
import {policyRule} from './policy-rule.js'
import {recipeValueWords} from './recipe-values.js'
import {defineTool} from './tool.js'

/** Refuse (exit 5, naming the rule) steering another owner's Run, or one whose Recipe this server may not launch. */
function enforceSteerPolicy(policy: McpPolicy, home: string, run: string): void {
  enforceRunOwner(policy, home, run)
  const {meta} = requireRun(home, resolveRunRef(home, run))
  enforceLaunchPolicy(policy, typeof meta.recipe === 'string' ? {recipe: meta.recipe} : {command: true})
}

export const sendTool = defineTool({
  name: 'send',
  title: 'Send a message to a Run',
  description: [
    'Steer a live Run or continue a finished one. A live Run whose Recipe has an inbox gets the message (one stdin line, or its inbox file);',
    'a live Run without an inbox is refused (exit 3). A finished Run is resumed as its next generation with the message (ACTORS_MESSAGE),',
    'and its result reaches `wait` again. Use it to redirect a participant or ask a finished one a follow-up instead of launching a new Run.',
  ].join(' '),
  input: () => ({
    run: z.string().min(1).describe('Run id or state dir'),
    message: z.string().min(1).describe(`the message (at most ${MAX_MESSAGE_BYTES} bytes)`),
  }),
  async call({run, message}, {home, policy, recipesFlag}) {
    enforceSteerPolicy(policy, home, run)
    // A generation this server starts records its policy, like a Run it starts (launch/tree-policy.ts).
    const reply = await sendMessage(home, run, message, [policyRule(policy, home, recipesFlag)])
    const how =
      reply.delivered === 'resumed'
        ? `resumed as generation ${reply.generation}`
        : `delivered to its ${reply.delivered}`
    return {document: reply, summary: `${reply.run}: message ${reply.message_id} ${how}`}
  },
})

export const rerunTool = defineTool({
  name: 'rerun',
  title: 'Run a finished Run again',
  description: [
    'Start a finished Run again as its next generation: same Recipe, cwd and lineage; `values` replace earlier values and are validated like a launch',
    '(nothing starts on a bad value). A live Run is refused (exit 5). Collect the new generation with `wait`.',
  ].join(' '),
  input: () => ({
    run: z.string().min(1).describe('Run id or state dir'),
    values: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
      .optional()
      .describe('Recipe args to replace, e.g. {"target": "release"}'),
  }),
  async call({run, values}, {home, policy, recipesFlag}) {
    enforceSteerPolicy(policy, home, run)
    const state = requireRun(home, resolveRunRef(home, run))
    // A list only for an array arg of the Run's Recipe (recipe-values.ts); a gone Recipe is specFromMeta's to refuse.
    const file = state.meta.recipe_file
    const recipe =
      file && values && existsSync(file)
        ? loadRecipeFile(file, dirname(file))
        : {name: state.meta.recipe ?? state.meta.run, args: []}
    const assignments = recipeValueWords(recipe, values)
    const started = startNextGeneration(home, state, {assignments, policy: [policyRule(policy, home, recipesFlag)]})
    return {
      document: started,
      summary: `${started.status} ${started.run} generation ${started.generation}; collect it with wait`,
    }
  },
})

export const closeTool = defineTool({
  name: 'close',
  title: 'Close a Run',
  description: [
    'Retire a participant: a live Run is stopped first (as control stop, descendants too), then its id is closed, so a later send, rerun or adopt',
    'of it is refused (exit 5, "RUN is closed; start a new Run"). inspect and logs still read it. Closing a closed Run succeeds and changes nothing.',
  ].join(' '),
  input: () => ({
    run: z.string().min(1).describe('Run id or state dir'),
  }),
  async call({run}, {home, policy}) {
    enforceSteerPolicy(policy, home, run)
    const reply = await closeRun(home, run, SERVICE_KINDS)
    const how = reply.already_closed ? 'was already closed' : reply.stopped ? 'stopped and closed' : 'closed'
    return {document: reply, summary: `${reply.run} ${how} (${reply.status})`}
  },
})
