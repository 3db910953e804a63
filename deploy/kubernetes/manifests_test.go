package kubernetes

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// manifests is what ferry.yaml holds, by kind and name.
type manifests struct {
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	services    map[string]*corev1.Service
	deployments map[string]*appsv1.Deployment
}

func newManifests() *manifests {
	return &manifests{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		services: map[string]*corev1.Service{}, deployments: map[string]*appsv1.Deployment{}}
}

// load decodes every document of file strictly into its kind's type.
func load(t *testing.T, file string) *manifests {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := newManifests()
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		if err := m.add(doc); err != nil {
			t.Errorf("%s, document %d: %v", file, i+1, err)
		}
	}
	return m
}

// add decodes one document into the type its apiVersion and kind name.
func (m *manifests) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var meta *metav1.ObjectMeta
	var err error
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ConfigMap":
		o := &corev1.ConfigMap{}
		err, meta = yaml.UnmarshalStrict(doc, o), &o.ObjectMeta
		m.configMaps[o.Name] = o
	case "v1 Secret":
		o := &corev1.Secret{}
		err, meta = yaml.UnmarshalStrict(doc, o), &o.ObjectMeta
		m.secrets[o.Name] = o
	case "v1 Service":
		o := &corev1.Service{}
		err, meta = yaml.UnmarshalStrict(doc, o), &o.ObjectMeta
		m.services[o.Name] = o
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		err, meta = yaml.UnmarshalStrict(doc, o), &o.ObjectMeta
		m.deployments[o.Name] = o
	default:
		return fmt.Errorf("apiVersion %q kind %q: not one this check knows", tm.APIVersion, tm.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return checkMeta(tm.Kind, meta)
}

// checkMeta checks an object's name and labels as the API server does.
func checkMeta(kind string, meta *metav1.ObjectMeta) error {
	errs := validation.IsDNS1123Label(meta.Name)
	for k, v := range meta.Labels {
		errs = append(errs, validation.IsQualifiedName(k)...)
		errs = append(errs, validation.IsValidLabelValue(v)...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s %q: %s", kind, meta.Name, strings.Join(errs, "; "))
	}
	return nil
}

func TestManifests(t *testing.T) {
	m := load(t, "ferry.yaml")
	if len(m.deployments) == 0 || len(m.services) == 0 {
		t.Fatalf("ferry.yaml holds %d deployments and %d services", len(m.deployments), len(m.services))
	}
	for name, d := range m.deployments {
		t.Run("Deployment "+name, func(t *testing.T) { m.checkDeployment(t, d) })
	}
	for name, s := range m.services {
		t.Run("Service "+name, func(t *testing.T) { m.checkService(t, s) })
	}
	ferry := m.deployments["ferry"]
	if ferry == nil {
		t.Fatal("no Deployment named ferry")
	}
	m.checkFerry(t, ferry)
}

// checkDeployment checks what the types do not: the selector picks the
// pods, every container has an image, every probe and mount names what
// exists.
func (m *manifests) checkDeployment(t *testing.T, d *appsv1.Deployment) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the selector %v does not pick the pods labelled %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
	}
	pod := &d.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		t.Fatal("no container")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
		m.checkVolume(t, v)
	}
	for _, c := range pod.Containers {
		if c.Image == "" {
			t.Errorf("container %s: no image", c.Name)
		}
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
			if p != nil && p.HTTPGet != nil && !hasPort(c, p.HTTPGet.Port.String()) {
				t.Errorf("container %s: a probe on port %s, which it does not open", c.Name, p.HTTPGet.Port.String())
			}
		}
		checkMounts(t, c, volumes)
	}
}

// checkVolume checks that a volume names a ConfigMap or Secret of the file.
func (m *manifests) checkVolume(t *testing.T, v corev1.Volume) {
	switch {
	case v.ConfigMap != nil && m.configMaps[v.ConfigMap.Name] == nil:
		t.Errorf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
	case v.Secret != nil && m.secrets[v.Secret.SecretName] == nil:
		t.Errorf("volume %s: no Secret %s", v.Name, v.Secret.SecretName)
	}
}

// checkMounts checks that each mount names a volume, and that no mount
// lies inside another (a ConfigMap's or Secret's volume is read-only: the
// kubelet cannot make the folder of a mount inside it).
func checkMounts(t *testing.T, c corev1.Container, volumes map[string]corev1.Volume) {
	for i, vm := range c.VolumeMounts {
		if _, ok := volumes[vm.Name]; !ok {
			t.Errorf("container %s: a mount of volume %s, which the pod does not have", c.Name, vm.Name)
		}
		for _, other := range c.VolumeMounts[i+1:] {
			if within(vm.MountPath, other.MountPath) || within(other.MountPath, vm.MountPath) {
				t.Errorf("container %s: mounts %s and %s nest", c.Name, vm.MountPath, other.MountPath)
			}
		}
	}
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// hasPort reports whether c opens port, a name or a number.
func hasPort(c corev1.Container, port string) bool {
	for _, p := range c.Ports {
		if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
			return true
		}
	}
	return false
}

// checkService checks that the service picks the pods of a Deployment of
// the file and sends to a port they open.
func (m *manifests) checkService(t *testing.T, s *corev1.Service) {
	for _, d := range m.deployments {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		for _, p := range s.Spec.Ports {
			if !hasPort(d.Spec.Template.Spec.Containers[0], p.TargetPort.String()) {
				t.Errorf("port %s goes to %s, which the pods of %s do not open", p.Name, p.TargetPort.String(), d.Name)
			}
		}
		return
	}
	t.Errorf("the selector %v picks no Deployment's pods", s.Spec.Selector)
}

// checkFerry checks ferry serve's container against its flags: probes on
// /readyz and /healthz, a grace period longer than the drain, the files
// it reads mounted from the ConfigMap's and Secret's keys, the Redis a
// Service of the file.
func (m *manifests) checkFerry(t *testing.T, d *appsv1.Deployment) {
	pod := &d.Spec.Template.Spec
	c := pod.Containers[0]
	flags := map[string]string{}
	for _, a := range c.Args[1:] {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Errorf("argument %q: write flags --name=value", a)
		}
		flags[name] = value
	}
	if c.Args[0] != "serve" {
		t.Errorf("the container runs ferry %s, not serve", c.Args[0])
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Error("no readiness probe on /readyz")
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Error("no liveness probe on /healthz")
	}
	m.checkGrace(t, pod, flags, c.ReadinessProbe)
	for _, f := range []string{"config", "token-file", "session-keys"} {
		if flags[f] == "" {
			t.Errorf("no --%s", f)
			continue
		}
		if !m.mounted(pod, c, flags[f]) {
			t.Errorf("--%s=%s is no key of a ConfigMap or Secret mounted there", f, flags[f])
		}
	}
	m.checkRedis(t, flags["redis"])
}

// checkGrace checks that the readiness probe sees a stopping replica
// within --drain-notice, and that the grace period covers the notice and
// the drain.
func (m *manifests) checkGrace(t *testing.T, pod *corev1.PodSpec, flags map[string]string, ready *corev1.Probe) {
	notice, err1 := time.ParseDuration(flags["drain-notice"])
	drain, err2 := time.ParseDuration(flags["drain"])
	if err1 != nil || err2 != nil {
		t.Errorf("--drain-notice and --drain: %v, %v", err1, err2)
		return
	}
	if ready != nil {
		seen := time.Duration(ready.PeriodSeconds*ready.FailureThreshold) * time.Second
		if seen >= notice {
			t.Errorf("the readiness probe takes %v to see a replica stop, not within --drain-notice=%v", seen, notice)
		}
	}
	grace := 30 * time.Second // the API's default
	if pod.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if grace <= notice+drain {
		t.Errorf("terminationGracePeriodSeconds %v does not cover --drain-notice=%v and --drain=%v", grace, notice, drain)
	}
}

// mounted reports whether file is a key of a ConfigMap or Secret that
// is mounted in c at the file's folder.
func (m *manifests) mounted(pod *corev1.PodSpec, c corev1.Container, file string) bool {
	dir, key := path.Split(file)
	for _, vm := range c.VolumeMounts {
		if path.Clean(vm.MountPath) != path.Clean(dir) {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && m.hasKey(v, key) {
				return true
			}
		}
	}
	return false
}

// hasKey reports whether the ConfigMap or Secret behind v holds key.
func (m *manifests) hasKey(v corev1.Volume, key string) bool {
	if v.ConfigMap != nil {
		if cm := m.configMaps[v.ConfigMap.Name]; cm != nil {
			_, ok := cm.Data[key]
			return ok
		}
	}
	if v.Secret != nil {
		if s := m.secrets[v.Secret.SecretName]; s != nil {
			_, ok := s.StringData[key]
			_, ok2 := s.Data[key]
			return ok || ok2
		}
	}
	return false
}

// checkRedis checks that --redis names a Service of the file, on a port
// it serves.
func (m *manifests) checkRedis(t *testing.T, redis string) {
	u, err := url.Parse(redis)
	if err != nil || u.Scheme != "redis" {
		t.Errorf("--redis=%s: not a redis:// URL", redis)
		return
	}
	s := m.services[u.Hostname()]
	if s == nil {
		t.Errorf("--redis=%s: no Service %s", redis, u.Hostname())
		return
	}
	for _, p := range s.Spec.Ports {
		if strconv.Itoa(int(p.Port)) == u.Port() {
			return
		}
	}
	t.Errorf("--redis=%s: Service %s has no port %s", redis, s.Name, u.Port())
}

// The decoding refuses what the API server would: a misspelt field, one
// in the wrong place, a value of the wrong type, an unknown kind, a name
// that is not one.
func TestDecodingIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"misspelt field", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {selectr: {a: b}}", `unknown field "selectr"`},
		{"misplaced field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {spec: {containers: [{name: c, path: /readyz}]}}}", `unknown field "path"`},
		{"wrong type", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: http}]}", "cannot unmarshal"},
		{"unknown kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}", "not one this check knows"},
		{"bad name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Ferry_1}", "RFC 1123"},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: b}\ndata: {c: d}", "already set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newManifests().add([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
