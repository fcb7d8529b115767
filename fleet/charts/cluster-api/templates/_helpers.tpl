{{- define "cluster-api.labels" -}}
app.kubernetes.io/name: cluster-api
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
