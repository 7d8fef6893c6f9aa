// Command argo-web-analysis runs an Argo Rollouts AnalysisTemplate's web
// metrics the way the Rollouts controller does, with Argo's own code: its
// template argument substitution, its web metric provider (the HTTP call and
// the jsonPath) and its evaluation of successCondition / failureCondition.
// It proves that Onset's copy-paste AnalysisTemplate works against a real
// Onset server without a Kubernetes cluster.
//
//	go run . -template analysis.yaml -arg deploy-id=42 -arg onset-token=...
//
// It prints one JSON line: each metric's measurement (phase, value, message)
// and the run's phase (the worst metric's, as the controller rolls them up).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-rollouts/metricproviders/webmetric"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	templateutil "github.com/argoproj/argo-rollouts/utils/template"
)

type argFlags []string

func (a *argFlags) String() string     { return strings.Join(*a, ",") }
func (a *argFlags) Set(v string) error { *a = append(*a, v); return nil }

type metricResult struct {
	Name    string                 `json:"name"`
	Phase   v1alpha1.AnalysisPhase `json:"phase"`
	Value   string                 `json:"value"`
	Message string                 `json:"message,omitempty"`
}

type report struct {
	Phase   v1alpha1.AnalysisPhase `json:"phase"`
	Metrics []metricResult         `json:"metrics"`
}

// worse orders phases as the analysis controller does when it rolls metric
// phases up into the run's: Failed > Error > Inconclusive > Successful.
var rank = map[v1alpha1.AnalysisPhase]int{
	v1alpha1.AnalysisPhaseSuccessful:   1,
	v1alpha1.AnalysisPhaseInconclusive: 2,
	v1alpha1.AnalysisPhaseError:        3,
	v1alpha1.AnalysisPhaseFailed:       4,
}

func main() {
	templatePath := flag.String("template", "", "AnalysisTemplate YAML file")
	var args argFlags
	flag.Var(&args, "arg", "name=value, as a Rollout's analysis args pass them (repeatable)")
	flag.Parse()
	if err := run(*templatePath, args); err != nil {
		fmt.Fprintln(os.Stderr, "argo-web-analysis:", err)
		os.Exit(2)
	}
}

func run(templatePath string, args []string) error {
	raw, err := os.ReadFile(templatePath)
	if err != nil {
		return err
	}
	var tmpl v1alpha1.AnalysisTemplate
	if err := yaml.UnmarshalStrict(raw, &tmpl); err != nil {
		return fmt.Errorf("%s: %w", templatePath, err)
	}
	if tmpl.Kind != "AnalysisTemplate" {
		return fmt.Errorf("%s: kind %q, want AnalysisTemplate", templatePath, tmpl.Kind)
	}
	resolved, err := mergeArgs(tmpl.Spec.Args, args)
	if err != nil {
		return err
	}
	// Argo's controller would now create an AnalysisRun from the template.
	analysisRun := &v1alpha1.AnalysisRun{Spec: v1alpha1.AnalysisRunSpec{Metrics: tmpl.Spec.Metrics, Args: resolved}}
	analysisRun.Name = tmpl.Name + "-run"

	out := report{Phase: v1alpha1.AnalysisPhaseSuccessful}
	logger := log.New()
	logger.SetOutput(os.Stderr)
	for _, m := range analysisRun.Spec.Metrics {
		if m.Provider.Web == nil {
			return fmt.Errorf("metric %s: not a web metric", m.Name)
		}
		metric, err := resolveMetricArgs(m, resolved)
		if err != nil {
			return fmt.Errorf("metric %s: %w", m.Name, err)
		}
		client, err := webmetric.NewWebMetricHttpClient(*metric)
		if err != nil {
			return err
		}
		parser, err := webmetric.NewWebMetricJsonParser(*metric)
		if err != nil {
			return err
		}
		provider := webmetric.NewWebMetricProvider(*log.NewEntry(logger), client, parser)
		measurement := provider.Run(analysisRun, *metric)
		out.Metrics = append(out.Metrics, metricResult{
			Name: metric.Name, Phase: measurement.Phase, Value: measurement.Value, Message: measurement.Message,
		})
		if rank[measurement.Phase] > rank[out.Phase] {
			out.Phase = measurement.Phase
		}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// mergeArgs gives the template's args the values passed in (as a Rollout's
// analysis step does; a secretKeyRef arg is given the secret's value here,
// which the controller would read from the cluster).
func mergeArgs(templateArgs []v1alpha1.Argument, given []string) ([]v1alpha1.Argument, error) {
	merged := append([]v1alpha1.Argument(nil), templateArgs...)
	for _, kv := range given {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-arg %q: want name=value", kv)
		}
		found := false
		for i := range merged {
			if merged[i].Name == name {
				v := value
				merged[i].Value, merged[i].ValueFrom, found = &v, nil, true
			}
		}
		if !found {
			return nil, fmt.Errorf("-arg %s: the template has no such arg", name)
		}
	}
	for _, a := range merged {
		if a.Value == nil {
			return nil, fmt.Errorf("args.%s was not resolved", a.Name)
		}
	}
	return merged, nil
}

// resolveMetricArgs substitutes {{args.*}} in a metric with Argo's own
// templating, as utils/analysis.ResolveMetricArgs does (that package also
// pulls in k8s.io/kubernetes, which this program avoids building).
func resolveMetricArgs(metric v1alpha1.Metric, args []v1alpha1.Argument) (*v1alpha1.Metric, error) {
	b, err := json.Marshal(metric)
	if err != nil {
		return nil, err
	}
	s, err := templateutil.ResolveQuotedArgs(string(b), args)
	if err != nil {
		return nil, err
	}
	var out v1alpha1.Metric
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
