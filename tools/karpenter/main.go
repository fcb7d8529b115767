// Command karpenter is Karpenter v1.14.1's own controllers (provisioning, bin-packing,
// registration, disruption and consolidation) over Karpenter's kwok cloud provider, the one
// the journey runs in place of the AWS provider on each tenant cluster.
//
// The fleet's NodePools point at an EC2NodeClass (karpenter.k8s.aws), which only the AWS
// provider reads: kwok's provider reads its own KWOKNodeClass. This provider differs from
// kwok's in that one respect. It supports EC2NodeClass: a NodePool is Ready only while its
// EC2NodeClass exists and is Ready, and a launch is refused until it is, as on AWS. The
// launch itself is kwok's: a Node registered with the KWOKNodeClass of the same name
// (the journey makes one per EC2NodeClass: its registration delay is the only setting).
// Instance types come from the file -instance-types-file-path names (the journey writes it
// from facts/instance-types.ts, with the labels the AWS provider sets).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/awslabs/operatorpkg/status"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"
)

// provider is kwok's cloud provider with EC2NodeClass as the NodeClass it supports.
type provider struct {
	*kwok.CloudProvider
	kube client.Client
}

func (p provider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&EC2NodeClass{}}
}

// Create launches only for a Ready EC2NodeClass, as the AWS provider does; a missing one is
// insufficient capacity (Karpenter tries another NodePool), a not-Ready one a NodeClass error.
func (p provider) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	class := &EC2NodeClass{}
	if err := p.kube.Get(ctx, types.NamespacedName{Name: claim.Spec.NodeClassRef.Name}, class); err != nil {
		if errors.IsNotFound(err) {
			return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("resolving EC2NodeClass %s, %w", claim.Spec.NodeClassRef.Name, err))
		}
		return nil, fmt.Errorf("resolving EC2NodeClass %s, %w", claim.Spec.NodeClassRef.Name, err)
	}
	if ready := class.StatusConditions().Get(status.ConditionReady); !ready.IsTrue() {
		return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("EC2NodeClass %s is not ready: %s", class.Name, ready.Message))
	}
	return p.CloudProvider.Create(ctx, claim)
}

func main() {
	ctx, op := operator.NewOperator()
	log.FromContext(ctx).Info("clusterra's karpenter over kwok", "recipe", recipe)
	catalogue, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil {
		// Without instance types nothing can launch: stop, as a provider whose catalogue fails does.
		log.FromContext(ctx).Error(err, "failed constructing instance types")
		panic(err)
	}
	// kwok reserves a fixed 100m and 10Mi on every type; the AWS provider reserves what the
	// EC2NodeClass's kubelet settings say, so a pod fits here only where it fits there.
	if text := os.Getenv(overheadEnv); text != "" {
		var overhead cloudprovider.InstanceTypeOverhead
		if err := json.Unmarshal([]byte(text), &overhead); err != nil {
			log.FromContext(ctx).Error(err, "reading "+overheadEnv)
			panic(err)
		}
		for _, t := range catalogue {
			t.Overhead = &overhead
		}
	}
	base := provider{CloudProvider: kwok.NewCloudProvider(ctx, op.GetClient(), catalogue), kube: op.GetClient()}
	decorated := overlay.Decorate(base, op.GetClient(), op.InstanceTypeStore)
	cluster := state.NewCluster(op.Clock, op.GetClient(), decorated)
	op.WithControllers(ctx, controllers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(), op.EventRecorder, decorated, base, cluster, op.InstanceTypeStore)...).Start(ctx)
}

// overheadEnv names the kubelet reservations every launched node keeps, from the EC2NodeClass's
// kubelet settings (JSON of cloudprovider.InstanceTypeOverhead: KubeReserved, SystemReserved,
// EvictionThreshold, each a resource list).
const overheadEnv = "CLUSTERRA_KUBELET_OVERHEAD"

// recipe is the digest of this folder's sources, stamped in by scripts/install-tools (it
// rebuilds the binary when they change).
var recipe string
