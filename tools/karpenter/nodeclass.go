package main

import (
	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// EC2NodeClass is the AWS provider's karpenter.k8s.aws/v1 EC2NodeClass as far as Karpenter's
// core reads it: its name and Ready condition. The spec is kept whole (the AWS side that reads
// it is not run here); the CRD is the fleet's, from the karpenter chart.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtime.RawExtension `json:"spec,omitempty"`
	Status            EC2NodeClassStatus   `json:"status,omitempty"`
}

type EC2NodeClassStatus struct {
	Conditions []status.Condition `json:"conditions,omitempty"`
}

type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

func (in *EC2NodeClass) StatusConditions(opts ...status.ForOption) status.ConditionSet {
	return status.NewReadyConditions().For(in, opts...)
}
func (in *EC2NodeClass) GetConditions() []status.Condition  { return in.Status.Conditions }
func (in *EC2NodeClass) SetConditions(c []status.Condition) { in.Status.Conditions = c }

func (in *EC2NodeClass) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	out.Status.Conditions = append([]status.Condition(nil), in.Status.Conditions...)
	return &out
}

func (in *EC2NodeClassList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]EC2NodeClass, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*EC2NodeClass)
	}
	return &out
}

func init() {
	gv := schema.GroupVersion{Group: "karpenter.k8s.aws", Version: "v1"}
	metav1.AddToGroupVersion(scheme.Scheme, gv)
	scheme.Scheme.AddKnownTypes(gv, &EC2NodeClass{}, &EC2NodeClassList{})
}
