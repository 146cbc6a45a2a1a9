// GENERATED BUILD ARTIFACT — this file lives under .build/ and is listed in .gitignore.
// A corpus walker must never index it. If you can find this text in the index, the walker
// is not honouring .gitignore (or the .build skip list).

import Foundation

enum __GeneratedResourceBundle {
    static let marker = "IGNORED_BUILD_ARTIFACT_7f3a9c"
    static let bundlePath = "/tmp/TripJournal/.build/debug/TripJournal_TripJournal.resources"
}
