import type { Agent } from 'undici';
import type { CompiledConfig } from '../config/types.js';
import { createUpstreamAgents } from '../doors/proxy/upstream-agent.js';
import { closeRuntime, createRuntime, type Runtime, type RuntimeServices, type VerifierFactory } from './runtime.js';

/** What one compiled config runs on: its runtime (verifiers, credentials, ...) and its upstream connection pools. */
export interface Generation {
  readonly runtime: Runtime;
  /** By route name. */
  readonly dispatchers: ReadonlyMap<string, Agent>;
}

export function createGeneration(config: CompiledConfig, verifierFor: VerifierFactory, services: RuntimeServices): Generation {
  return { runtime: createRuntime(config, verifierFor, services), dispatchers: createUpstreamAgents(config.routes) };
}

/** Fetches what the verifiers need (JWKS) so readiness holds across a swap; never throws. */
export async function warmGeneration(generation: Generation): Promise<void> {
  await Promise.all([...generation.runtime.routes.values()].map((entry) => entry.verifier.warm()));
}

/** Closes verifiers and pools; undici lets requests already dispatched on the pools finish first. */
export async function retireGeneration(generation: Generation): Promise<void> {
  await Promise.all([closeRuntime(generation.runtime), ...[...generation.dispatchers.values()].map((agent) => agent.close())]);
}
