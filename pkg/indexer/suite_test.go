package indexer

import "testing"

// envMaker returns an indexer over a fresh, empty store.
type envMaker func(t testing.TB, mod ...func(*Config)) *env

// suite is every behaviour test that runs against any store: the fast tier
// runs it over a local directory (TestLocal), the emulator tier over S3.
var suite = []struct {
	name string
	run  func(*testing.T, envMaker)
}{
	{"BucketContract", testBucketContract},
	{"KeysOutsideTheContract", testKeysOutsideTheContract},
	{"DropsInNoFormOfTheContractAreReported", testDropsInNoFormOfTheContractAreReported},
	{"FilesBesideASkillMDAreWarnedAbout", testFilesBesideASkillMDAreWarnedAbout},
	{"InvalidKeysAreRejectedWhileTheyExist", testInvalidKeysAreRejectedWhileTheyExist},
	{"ControlByteInAKeyIsRejected", testControlByteInAKeyIsRejected},
	{"NameMustMatchTheKey", testNameMustMatchTheKey},
	{"Versions", testVersions},
	{"RejectionIsRecordedAuditedAndCounted", testRejectionIsRecordedAuditedAndCounted},
	{"RedeliveredRejectionIsRecordedOnce", testRedeliveredRejectionIsRecordedOnce},
	{"NameConflictAndTakeover", testNameConflictAndTakeover},
	{"ReplacingAKeyInOneBatchIsATakeover", testReplacingAKeyInOneBatchIsATakeover},
	{"DeleteWithdrawsAndReuploadRevives", testDeleteWithdrawsAndReuploadRevives},
	{"ConcurrentUploadsOfDistinctSkillsAllLand", testConcurrentUploadsOfDistinctSkillsAllLand},
	{"ConfigOverridesDroppedEntries", testConfigOverridesDroppedEntries},
	{"ConfigEntriesOfItsOwn", testConfigEntriesOfItsOwn},
	{"ConfigEntryMustNameItsBytes", testConfigEntryMustNameItsBytes},
	{"InvalidConfigIsRejectedWholeAndThePreviousStays", testInvalidConfigIsRejectedWholeAndThePreviousStays},
	{"ConfigChangeReevaluatesWhatItTouches", testConfigChangeReevaluatesWhatItTouches},
	{"ConfigCapsApplyAtValidation", testConfigCapsApplyAtValidation},
	{"Listings", testListings},
	{"ExternalEntries", testExternalEntries},
	{"ADifferentFetchFailureIsNews", testADifferentFetchFailureIsNews},
	{"ExternalFetchFollowsOnlyHTTPSRedirects", testExternalFetchFollowsOnlyHTTPSRedirects},
	{"PinnedExternalEntryIsNeverFetched", testPinnedExternalEntryIsNeverFetched},
	{"ExternalURLCannotReachInside", testExternalURLCannotReachInside},
	{"ConfigRedeliveryWritesNothing", testConfigRedeliveryWritesNothing},
	{"HandleEventShapes", testHandleEventShapes},
	{"HandleIgnoresWhatIsNotAHint", testHandleIgnoresWhatIsNotAHint},
	{"HandleReindexPayload", testHandleReindexPayload},
	{"EventsConverge", testEventsConverge},
	{"ReindexEqualsIncremental", testReindexEqualsIncremental},
	{"AKeyChangedDuringTheRoundIsReadAgain", testAKeyChangedDuringTheRoundIsReadAgain},
	{"StaleRejectionIsNotRecorded", testStaleRejectionIsNotRecorded},
	{"FilesArePinnedForMCP", testFilesArePinnedForMCP},
	{"ConfigChangeRejudgesScannedVersions", testConfigChangeRejudgesScannedVersions},
	{"AnAllowOfNoRuleIsAWarning", testAnAllowOfNoRuleIsAWarning},
	{"ARevokedUploadLeavesNoEntry", testARevokedUploadLeavesNoEntry},
	{"AnAllowPutBackIsAudited", testAnAllowPutBackIsAudited},
}

func TestLocal(t *testing.T) {
	for _, s := range suite {
		t.Run(s.name, func(t *testing.T) { s.run(t, newEnv) })
	}
}
