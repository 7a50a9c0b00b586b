import type { IncomingMessage, ServerResponse } from 'node:http';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pathOf, type DecisionState, type DecisionTrace } from '../../decision/index.js';
import { bounded, type AuditPrincipal } from '../../observability/audit.js';
import { TRACER_NAME } from '../../observability/tracing-sdk.js';
import type { JsonRpcMessageFacts } from '../../policy/jsonrpc.js';

/**
 * What the front doors do when `telemetry.traces` is set. Loaded only then (src/gateway/tracing.ts imports this
 * module lazily, the doors import its type only): with tracing off, no door calls anything of it.
 *
 * On fastify's doors the span per request comes from @fastify/otel (the Fastify team's instrumentation for
 * fastify 5, registered as a plugin: no require hook), which takes the caller's W3C traceparent/tracestate header
 * as the parent and runs the request's hooks and handler in the span's context, so the calls made meanwhile
 * (undici, ioredis) are its children. The proxy door serves its requests before fastify sees them
 * (doors/proxy/plugin.ts), so it starts the same span itself (`startRequest`). The gateway adds what only it
 * knows: the decision's steps as events, and the route, MCP method and target, verdict and caller (as a keyed
 * hash) as attributes.
 */
export interface DoorTracing {
  /** A span per request on `app`: call right after creating the app, before any hook or route. */
  register(app: FastifyInstance, options: { readonly ignore?: (path: string) => boolean }): void;
  /** Records `state`'s decision on the request's span (`state.trace`), when the request is sampled. */
  traceDecision(request: FastifyRequest, state: DecisionState): void;
  /**
   * The span of a request the proxy door serves on Node's own request and response, as @fastify/otel would make
   * it: a server span, child of the caller's traceparent, ended when the response closes with its status.
   */
  startRequest(request: IncomingMessage, response: ServerResponse): RequestSpan;
}

/** The proxy door's span of one request. */
export interface RequestSpan {
  /**
   * Runs `step` in the span's context, so that the calls it makes (undici, ioredis) are the span's children. The
   * door enters it again wherever it resumes from a stream's event (the body read), which carries no context.
   */
  run<T>(step: () => T): T;
  /** Records `state`'s decision on the span (`state.trace`), when the request is sampled. */
  traceDecision(state: DecisionState): void;
  /**
   * Starts the upstream call (`start`) in the MCP message's own trace when its `params._meta` carries a valid
   * traceparent (MCP SEP-414): a span for the message, child of that context and linked to the request's span,
   * ended when the response closes. Else in the context it is called in (the request's).
   */
  inMessageTrace<T>(message: JsonRpcMessageFacts | undefined, start: () => T): T;
}

/** The gateway's own attributes, beside OpenTelemetry's semantic conventions for HTTP and MCP. */
const ATTRIBUTE = {
  route: 'mcp_gateway.route',
  decision: 'mcp_gateway.decision',
  principal: 'mcp_gateway.principal',
  clientId: 'mcp_gateway.client_id',
  stage: 'mcp_gateway.decision.stage',
} as const;

/** The MCP method and its target, named as OpenTelemetry's MCP conventions name them. */
function messageAttributes(message: JsonRpcMessageFacts | undefined): Attributes {
  if (!message?.method) return {};
  const attributes: Attributes = { 'mcp.method.name': bounded(message.method) };
  if (message.toolName !== undefined) attributes['gen_ai.tool.name'] = bounded(message.toolName);
  if (message.resourceUri !== undefined) attributes['mcp.resource.uri'] = bounded(message.resourceUri);
  if (message.promptName !== undefined) attributes['gen_ai.prompt.name'] = bounded(message.promptName);
  return attributes;
}

/** `tools/call add`: the method and what it acts on, as the MCP conventions name an operation's span. */
function messageSpanName(message: JsonRpcMessageFacts): string {
  const target = message.toolName ?? message.promptName ?? message.resourceUri;
  const method = message.method ?? 'mcp';
  return bounded(target === undefined ? method : `${method} ${target}`);
}

/**
 * The decision as the request's span records it: each step an event as it starts, then, once decided, what was
 * decided about whom. Attributes are written once, from the state as it stands at the verdict: never a token (the
 * state keeps it private), never the subject in clear (a keyed hash, the same as `log.audit_subject: hashed`).
 */
class SpanDecisionTrace implements DecisionTrace {
  #decided = false;

  constructor(
    private readonly span: Span,
    private readonly state: DecisionState,
    private readonly principalOf: AuditPrincipal,
  ) {}

  step(name: string, stage: 'admit' | 'authorize'): void {
    this.span.addEvent(name, { [ATTRIBUTE.stage]: stage });
  }

  decided(verdict: string): void {
    if (this.#decided) {
      // A refusal after the decision allowed the request: the upstream failed or refused.
      this.span.setAttribute('error.type', verdict);
      return;
    }
    this.#decided = true;
    const { entry, auth, message } = this.state;
    const attributes: Attributes = { [ATTRIBUTE.decision]: verdict, ...messageAttributes(message) };
    if (verdict !== 'allowed' && verdict !== 'answered') attributes['error.type'] = verdict;
    if (entry) {
      attributes[ATTRIBUTE.route] = entry.route.name;
      // fastify's route is the catch-all; the gateway's route table names the real one (HTTP span name rules).
      attributes['http.route'] = entry.route.path;
      this.span.updateName(`${this.state.facts.method} ${entry.route.path}`);
    }
    if (auth) {
      attributes[ATTRIBUTE.principal] = this.principalOf(auth);
      if (auth.clientId !== undefined) attributes[ATTRIBUTE.clientId] = bounded(auth.clientId);
    }
    this.span.setAttributes(attributes);
  }
}

/** `RequestSpan`: the span, and the context that holds it. */
class ProxyRequestSpan implements RequestSpan {
  constructor(
    private readonly tracer: Tracer,
    private readonly spanContext: Context,
    private readonly span: Span,
    private readonly response: ServerResponse,
    private readonly principalOf: AuditPrincipal,
  ) {}

  run<T>(step: () => T): T {
    return context.with(this.spanContext, step);
  }

  traceDecision(state: DecisionState): void {
    if (this.span.isRecording()) state.trace = new SpanDecisionTrace(this.span, state, this.principalOf);
  }

  inMessageTrace<T>(message: JsonRpcMessageFacts | undefined, start: () => T): T {
    const carried = message?.traceContext;
    const parent = carried && propagation.extract(ROOT_CONTEXT, carried);
    const parentSpan = parent && trace.getSpanContext(parent);
    // No (valid) context in the message: the call is a child of the request's span, active here.
    if (!message || !parent || !parentSpan || !trace.isSpanContextValid(parentSpan)) return start();
    const span = this.tracer.startSpan(
      messageSpanName(message),
      { kind: SpanKind.SERVER, attributes: messageAttributes(message), links: [{ context: this.span.spanContext() }] },
      parent,
    );
    this.response.once('close', () => span.end());
    return context.with(trace.setSpan(parent, span), start);
  }
}

export function createDoorTracing(principalOf: AuditPrincipal): DoorTracing {
  const tracer = trace.getTracer(TRACER_NAME);
  return {
    register(app, { ignore }) {
      const instrumentation = new FastifyOtelInstrumentation({
        registerOnInitialization: false,
        // One span per request, and one for its handler (run in that span's context); a span per hook would only
        // repeat them.
        instrumentHooks: false,
        instrumentHandler: true,
        // An exception's message and stack may quote the request: the span's status says what failed.
        recordExceptions: false,
        ...(ignore && { ignorePaths: ({ url }: { url: string }) => ignore(pathOf(url)) }),
        // fastify's url.path is the request target with its query, which a client may fill with a credential.
        requestHook: (span, request) => span.setAttribute('url.path', pathOf(request.url)),
      });
      // The plugin is called directly rather than through `register()`, whose plugins load only at `ready`: its
      // onRequest hook must come before every other and its onRoute hook see every route.
      const plugin = instrumentation.plugin();
      plugin(app, {}, (error?: Error) => {
        if (error) throw error;
      });
    },

    traceDecision(request, state) {
      const span = request.opentelemetry().span;
      if (span?.isRecording()) state.trace = new SpanDecisionTrace(span, state, principalOf);
    },

    startRequest(request, response) {
      const active = context.active();
      // As @fastify/otel: the caller's traceparent is the parent unless a span is already active.
      const parent = trace.getSpan(active) ? active : propagation.extract(active, request.headers);
      const method = request.method ?? 'GET';
      // The door serves exact route paths only: the path is the route (the decision names it again once known).
      const path = pathOf(request.url ?? '/');
      const span = tracer.startSpan(
        `${method} ${path}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path, 'http.route': path } },
        parent,
      );
      response.once('close', () => {
        // As on fastify's doors (README "Tracing"): a request whose client went away before any answer exports no
        // request span; an unended span is only garbage.
        if (!response.headersSent) return;
        span.setAttribute('http.response.status_code', response.statusCode);
        if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      return new ProxyRequestSpan(tracer, trace.setSpan(parent, span), span, response, principalOf);
    },
  };
}
