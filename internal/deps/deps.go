// Package deps pins modules that packages under construction will import.
package deps

import (
	_ "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	_ "github.com/milvus-io/milvus/client/v2/milvusclient"
)
