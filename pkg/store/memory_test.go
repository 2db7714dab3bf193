package store_test

import (
	"testing"

	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/store/storetest"
)

func TestMemoryContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.NewMemory() })
}

func TestVersionedMemoryContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.NewVersionedMemory() })
}
