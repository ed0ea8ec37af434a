{{/* Names and labels, the usual way. */}}
{{- define "streameval.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "streameval.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "streameval.selectorLabels" -}}
app.kubernetes.io/name: {{ include "streameval.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "streameval.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "streameval.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: evaluator
{{- end }}

{{- define "streameval.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "streameval.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "streameval.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* metrics.port of streameval.toml: the container port, the probes, the PodMonitor. */}}
{{- define "streameval.metricsPort" -}}
{{- $metrics := .Values.config.metrics | default dict }}
{{- $metrics.port | default 9724 | int }}
{{- end }}

{{- define "streameval.metricsScheme" -}}
{{- if .Values.metricsTls.enabled }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/* Secret names: the existing one when given, else the one this chart creates. */}}
{{- define "streameval.kafkaSaslSecret" -}}
{{- default (printf "%s-kafka-sasl" (include "streameval.fullname" .)) .Values.kafkaSasl.existingSecret }}
{{- end }}
{{- define "streameval.kafkaTlsSecret" -}}
{{- default (printf "%s-kafka-tls" (include "streameval.fullname" .)) .Values.kafkaTls.existingSecret }}
{{- end }}
{{- define "streameval.metricsAuthSecret" -}}
{{- default (printf "%s-metrics-auth" (include "streameval.fullname" .)) .Values.metricsAuth.existingSecret }}
{{- end }}
{{- define "streameval.metricsTlsSecret" -}}
{{- default (printf "%s-metrics-tls" (include "streameval.fullname" .)) .Values.metricsTls.existingSecret }}
{{- end }}

{{- define "streameval.saslEnabled" -}}
{{- if or .Values.kafkaSasl.existingSecret .Values.kafkaSasl.password }}true{{ end }}
{{- end }}

{{- define "streameval.kafkaTlsDir" -}}/etc/streameval/kafka-tls{{- end }}
{{- define "streameval.metricsTlsDir" -}}/etc/streameval/metrics-tls{{- end }}

{{/*
streameval.toml: .Values.config with what the chart decides (the TLS file paths) merged in.
Every mistake a user can make here fails the render with one line naming the value and the fix.
*/}}
{{- define "streameval.config" -}}
{{- $config := deepCopy (.Values.config | default dict) }}
{{- $kafka := $config.kafka | default dict }}
{{- $metrics := $config.metrics | default dict }}
{{- if not $kafka.bootstrap_servers }}
{{- fail "config.kafka.bootstrap_servers is required: --set config.kafka.bootstrap_servers=HOST:PORT (your Kafka cluster's bootstrap address)" }}
{{- end }}
{{- range $key := list "sasl_password" "ssl_password" }}
{{- if hasKey $kafka $key }}
{{- fail (printf "config.kafka.%s: secrets never go in the ConfigMap; use kafkaSasl / kafkaTls (a Secret) instead" $key) }}
{{- end }}
{{- end }}
{{- if hasKey $metrics "basic_auth_password" }}
{{- fail "config.metrics.basic_auth_password: secrets never go in the ConfigMap; use metricsAuth (a Secret) instead" }}
{{- end }}
{{- range $key := list "basic_auth_username" "tls_certfile" "tls_keyfile" }}
{{- if hasKey $metrics $key }}
{{- fail (printf "config.metrics.%s: set by the chart; use metricsAuth / metricsTls instead" $key) }}
{{- end }}
{{- end }}
{{- range $key := list "ssl_cafile" "ssl_certfile" "ssl_keyfile" }}
{{- if hasKey $kafka $key }}
{{- fail (printf "config.kafka.%s: set by the chart; use kafkaTls (a Secret mounted as files) instead" $key) }}
{{- end }}
{{- end }}
{{- if hasKey $kafka "group_instance_id" }}
{{- fail "config.kafka.group_instance_id: set per pod by the chart (staticMembership: true), not one value for every pod" }}
{{- end }}
{{- $protocol := $kafka.security_protocol | default "PLAINTEXT" }}
{{- if and (include "streameval.saslEnabled" .) (not (hasPrefix "SASL_" $protocol)) }}
{{- fail (printf "config.kafka.security_protocol is %s but kafkaSasl gives a password: set it to SASL_SSL (or SASL_PLAINTEXT)" $protocol) }}
{{- end }}
{{- if and .Values.kafkaTls.enabled (not (hasSuffix "SSL" $protocol)) }}
{{- fail (printf "config.kafka.security_protocol is %s but kafkaTls is enabled: set it to SSL or SASL_SSL" $protocol) }}
{{- end }}
{{- if .Values.kafkaTls.enabled }}
{{- $dir := include "streameval.kafkaTlsDir" . }}
{{- $_ := set $kafka "ssl_cafile" (printf "%s/%s" $dir .Values.kafkaTls.caKey) }}
{{- if and .Values.kafkaTls.certKey .Values.kafkaTls.keyKey }}
{{- $_ := set $kafka "ssl_certfile" (printf "%s/%s" $dir .Values.kafkaTls.certKey) }}
{{- $_ := set $kafka "ssl_keyfile" (printf "%s/%s" $dir .Values.kafkaTls.keyKey) }}
{{- end }}
{{- end }}
{{- if .Values.metricsTls.enabled }}
{{- $dir := include "streameval.metricsTlsDir" . }}
{{- $_ := set $metrics "tls_certfile" (printf "%s/tls.crt" $dir) }}
{{- $_ := set $metrics "tls_keyfile" (printf "%s/tls.key" $dir) }}
{{- end }}
{{- $_ := set $config "kafka" $kafka }}
{{- $_ := set $config "metrics" $metrics }}
{{- include "streameval.wholeNumbers" $config }}
{{- toToml $config }}
{{- end }}

{{/*
Helm reads every number of a values file as a float (9724 -> 9724.0, 1000000 -> 1e+06 in TOML):
make the whole ones integers again, in place (the daemon's integer keys take no float; its float
keys take integers).
*/}}
{{- define "streameval.wholeNumbers" -}}
{{- $table := . }}
{{- range $key, $value := $table }}
{{- if and (kindIs "float64" $value) (eq $value (float64 (int64 $value))) }}
{{- $_ := set $table $key (int64 $value) }}
{{- else if kindIs "map" $value }}
{{- include "streameval.wholeNumbers" $value }}
{{- else if kindIs "slice" $value }}
{{- $items := list }}
{{- range $item := $value }}
{{- if and (kindIs "float64" $item) (eq $item (float64 (int64 $item))) }}
{{- $items = append $items (int64 $item) }}
{{- else }}
{{- if kindIs "map" $item }}{{ include "streameval.wholeNumbers" $item }}{{ end }}
{{- $items = append $items $item }}
{{- end }}
{{- end }}
{{- $_ := set $table $key $items }}
{{- end }}
{{- end }}
{{- end }}
