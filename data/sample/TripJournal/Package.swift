// swift-tools-version: 6.0
// The swift-tools-version declares the minimum version of Swift required to build this package.

import PackageDescription

let package = Package(
    name: "TripJournal",
    defaultLocalization: "en",
    platforms: [
        .iOS(.v16),
    ],
    products: [
        .executable(name: "TripJournal", targets: ["TripJournal"]),
    ],
    targets: [
        .executableTarget(
            name: "TripJournal",
            path: "Sources/TripJournal",
            exclude: ["Generated"],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
            ]
        ),
        .testTarget(
            name: "TripJournalTests",
            dependencies: ["TripJournal"],
            path: "Tests/TripJournalTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
