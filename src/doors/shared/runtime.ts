import type { DecisionRuntime } from '../../decision/index.js';
import type { AuditPrincipal } from '../../observability/audit.js';

/** What the doors read of the runtime a request is pinned to: the decision's, and how audit lines name callers. */
export interface DoorRuntime extends DecisionRuntime {
  /** How this config's audit lines name the caller (`log.audit_subject`). */
  readonly auditPrincipal: AuditPrincipal;
}
