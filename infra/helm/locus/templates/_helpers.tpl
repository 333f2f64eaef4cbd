{{- define "locus.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "locus.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The worker pods' labels: the StatefulSet's selector and the Service's. */}}
{{- define "locus.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: worker
{{- end -}}

{{/* The schedules Job's pod labels: never the workers' selector, so the
Service and the StatefulSet do not count the Job's pod as a worker. */}}
{{- define "locus.jobLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: schedules
{{- end -}}

{{/* The environment every locus container reads its flags from (LOCUS_<FLAG>). */}}
{{- define "locus.env" -}}
- name: LOCUS_TEMPORAL
  value: {{ .Values.temporal.address | quote }}
- name: LOCUS_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: LOCUS_STORE
  value: {{ .Values.store.url | quote }}
- name: LOCUS_HOME
  value: /var/lib/locus
{{- with .Values.embedder }}
- name: LOCUS_EMBEDDER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.vectors }}
- name: LOCUS_VECTORS
  value: {{ . | quote }}
{{- end }}
{{- with .Values.llm }}
- name: LOCUS_LLM
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "locus.envFrom" -}}
{{- if or .Values.store.secretName .Values.secretEnv }}
envFrom:
{{- with .Values.store.secretName }}
  - secretRef: {name: {{ . }}}
{{- end }}
{{- with .Values.secretEnv }}
  - secretRef: {name: {{ . }}}
{{- end }}
{{- end }}
{{- end -}}
