{{/* Chart name, overridable. */}}
{{- define "mcp-auth-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Resource name: release-chart unless the release name already contains the chart name. */}}
{{- define "mcp-auth-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mcp-auth-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mcp-auth-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-auth-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mcp-auth-gateway.labels" -}}
helm.sh/chart: {{ include "mcp-auth-gateway.chart" . }}
{{ include "mcp-auth-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "mcp-auth-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mcp-auth-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "mcp-auth-gateway.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Where the image's CMD and the chart both expect the config file. */}}
{{- define "mcp-auth-gateway.configDir" -}}/etc/mcp-auth-gateway{{- end -}}

{{/* Container ports come from the gateway config, with the gateway's own defaults. */}}
{{- define "mcp-auth-gateway.httpPort" -}}
{{- dig "listen" "port" 8080 .Values.config | int -}}
{{- end -}}

{{- define "mcp-auth-gateway.adminPort" -}}
{{- dig "admin" "port" 9090 .Values.config | int -}}
{{- end -}}

{{/* The gateway serves the admin listener unless config.admin.enabled is false. */}}
{{- define "mcp-auth-gateway.adminEnabled" -}}
{{- if dig "admin" "enabled" true .Values.config -}}true{{- end -}}
{{- end -}}

{{/* True when the cache is shared: through redis.* or a Redis written into config.cache directly. */}}
{{- define "mcp-auth-gateway.redisConfigured" -}}
{{- if or .Values.redis.enabled (include "mcp-auth-gateway.configRedis" .) -}}true{{- end -}}
{{- end -}}

{{/* True when config.cache names a Redis itself: redis_url, redis_sentinel or redis_cluster. */}}
{{- define "mcp-auth-gateway.configRedis" -}}
{{- $cache := dig "cache" dict .Values.config -}}
{{- if or (dig "redis_url" "" $cache) (dig "redis_sentinel" "" $cache) (dig "redis_cluster" "" $cache) -}}true{{- end -}}
{{- end -}}

{{/* The host of config.public_url, which the Ingress serves. */}}
{{- define "mcp-auth-gateway.publicHost" -}}
{{- (urlParse (toString .Values.config.public_url)).hostname -}}
{{- end -}}

{{/* config.decision.port when the decision listener binds an address other pods can reach; empty otherwise. */}}
{{- define "mcp-auth-gateway.exposedDecisionPort" -}}
{{- with dig "decision" dict .Values.config -}}
{{- $host := dig "host" "127.0.0.1" . -}}
{{- if not (or (hasPrefix "127." $host) (eq $host "localhost" "::1")) -}}{{ dig "port" 8181 . | int }}{{- end -}}
{{- end -}}
{{- end -}}

{{/* One NetworkPolicy peer from a {namespaceSelector, podSelector} value: both set means pods matching both. */}}
{{- define "mcp-auth-gateway.networkPeer" -}}
{{- $peer := dict -}}
{{- with .namespaceSelector }}{{ $_ := set $peer "namespaceSelector" . }}{{ end -}}
{{- with .podSelector }}{{ $_ := set $peer "podSelector" . }}{{ end -}}
{{- toYaml (list $peer) -}}
{{- end -}}

{{/* topologySpreadConstraints with this release's gateway pods as the labelSelector of entries that name none. */}}
{{- define "mcp-auth-gateway.topologySpreadConstraints" -}}
{{- $constraints := list -}}
{{- range .Values.topologySpreadConstraints -}}
{{- $constraint := deepCopy . -}}
{{- if not (hasKey $constraint "labelSelector") -}}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" (include "mcp-auth-gateway.selectorLabels" $ | fromYaml)) -}}
{{- end -}}
{{- $constraints = append $constraints $constraint -}}
{{- end -}}
{{- toYaml $constraints -}}
{{- end -}}

{{/* config.shutdown.grace_period in whole seconds (rounded up), default 20s; durations are N, Nms, Ns, Nm, Nh. */}}
{{- define "mcp-auth-gateway.graceSeconds" -}}
{{- $grace := dig "shutdown" "grace_period" "20s" .Values.config -}}
{{- if kindIs "string" $grace -}}
{{- $number := regexFind "^[0-9]+" $grace -}}
{{- $amount := $number | int -}}
{{- $unit := trimPrefix $number $grace -}}
{{- if eq $unit "ms" -}}{{ div (add $amount 999) 1000 }}
{{- else if eq $unit "m" -}}{{ mul $amount 60 }}
{{- else if eq $unit "h" -}}{{ mul $amount 3600 }}
{{- else -}}{{ $amount }}
{{- end -}}
{{- else -}}
{{- ceil $grace | int -}}
{{- end -}}
{{- end -}}

{{/* Every combination the chart refuses, with the reason; included by the Deployment. */}}
{{- define "mcp-auth-gateway.validate" -}}
{{- $redis := include "mcp-auth-gateway.redisConfigured" . -}}
{{- $maxReplicas := .Values.replicaCount | int -}}
{{- if .Values.autoscaling.enabled -}}
{{- $maxReplicas = .Values.autoscaling.maxReplicas | int -}}
{{- if gt (.Values.autoscaling.minReplicas | int) $maxReplicas -}}
{{- fail "autoscaling.minReplicas must not exceed autoscaling.maxReplicas" -}}
{{- end -}}
{{- end -}}
{{- if and (gt $maxReplicas 1) (not $redis) -}}
{{- fail "more than one replica (replicaCount or autoscaling.maxReplicas) needs a shared cache: set redis.enabled (with existingSecret holding CACHE_KEY_SECRET) or config.cache.redis_url / redis_sentinel / redis_cluster. Introspection answers and MCP session bindings must be shared between replicas." -}}
{{- end -}}
{{- if and .Values.redis.url (not .Values.redis.enabled) -}}
{{- fail "redis.url is set but redis.enabled is false" -}}
{{- end -}}
{{- if .Values.redis.enabled -}}
{{- if include "mcp-auth-gateway.configRedis" . -}}
{{- fail "set either redis.enabled or config.cache.redis_url / redis_sentinel / redis_cluster, not both" -}}
{{- end -}}
{{- $needsSecret := or (not .Values.redis.url) (not (dig "cache" "key_secret" "" .Values.config)) -}}
{{- if and $needsSecret (not .Values.existingSecret) -}}
{{- fail "redis.enabled needs existingSecret: a Secret with CACHE_KEY_SECRET (>= 32 characters) and, unless redis.url is set, REDIS_URL" -}}
{{- end -}}
{{- end -}}
{{- $listenHost := dig "listen" "host" "0.0.0.0" .Values.config -}}
{{- if or (hasPrefix "127." $listenHost) (eq $listenHost "localhost" "::1") -}}
{{- fail "config.listen.host must not be a loopback address in Kubernetes: the Service and the kubelet's probes connect to the pod IP (use 0.0.0.0)" -}}
{{- end -}}
{{- if .Values.metrics.serviceMonitor.enabled -}}
{{- if not (include "mcp-auth-gateway.adminEnabled" .) -}}
{{- fail "metrics.serviceMonitor.enabled needs the admin listener: config.admin.enabled is false" -}}
{{- end -}}
{{- $adminHost := dig "admin" "host" "127.0.0.1" .Values.config -}}
{{- if or (hasPrefix "127." $adminHost) (eq $adminHost "localhost" "::1") -}}
{{- fail "metrics.serviceMonitor.enabled needs config.admin.host 0.0.0.0: Prometheus cannot scrape a loopback admin listener" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.trustedProxies (hasKey .Values.config "trusted_proxies") -}}
{{- fail "set trustedProxies or config.trusted_proxies, not both" -}}
{{- end -}}
{{- if .Values.ingress.enabled -}}
{{- if not (hasPrefix "https://" (toString .Values.config.public_url)) -}}
{{- fail "ingress.enabled terminates TLS for config.public_url, which must then be an https:// URL (clients and token audiences use it)" -}}
{{- end -}}
{{- end -}}
{{- if .Values.networkPolicy.enabled -}}
{{- $np := .Values.networkPolicy -}}
{{- if not (or $np.ingressController.namespaceSelector $np.ingressController.podSelector) -}}
{{- fail "networkPolicy.ingressController needs a namespaceSelector or a podSelector: the gateway would admit no MCP traffic" -}}
{{- end -}}
{{- if and (include "mcp-auth-gateway.adminEnabled" .) (not (or $np.monitoring.namespaceSelector $np.monitoring.podSelector)) -}}
{{- fail "networkPolicy.monitoring needs a namespaceSelector or a podSelector: Prometheus could not scrape the admin port" -}}
{{- end -}}
{{- range $index, $upstream := $np.upstreams -}}
{{- if not $upstream.name -}}
{{- fail (printf "networkPolicy.upstreams[%d].name is required" $index) -}}
{{- end -}}
{{- if not (dig "podSelector" "matchLabels" dict $upstream | len | or (dig "podSelector" "matchExpressions" list $upstream | len)) -}}
{{- fail (printf "networkPolicy.upstreams[%d].podSelector must select the upstream's pods: an empty selector fences in every pod of the namespace" $index) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $pdb := .Values.podDisruptionBudget -}}
{{- if and $pdb.enabled (ne (toString $pdb.minAvailable) "") (ne (toString $pdb.maxUnavailable) "") -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to \"\")" -}}
{{- end -}}
{{- $drain := add (.Values.preStopSleepSeconds | int) (include "mcp-auth-gateway.graceSeconds" . | int) -}}
{{- if le (.Values.terminationGracePeriodSeconds | int) $drain -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds + config.shutdown.grace_period (%d s), or the kubelet kills requests still draining" (.Values.terminationGracePeriodSeconds | int) $drain) -}}
{{- end -}}
{{- end -}}
