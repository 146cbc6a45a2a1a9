import SwiftUI
import SwiftData

/// The app entry point.
///
/// TripJournal supports iOS 16 with a JSON-file store and an `ObservableObject` model, and
/// switches to SwiftData, Observation and CloudKit sync on iOS 17 and later.
@main
struct TripJournalApp: App {
    @UIApplicationDelegateAdaptor(AppDelegate.self) private var appDelegate

    var body: some Scene {
        WindowGroup {
            if #available(iOS 17.0, *) {
                ContentView()
                    .modelContainer(SharedModelContainer.shared)
                    .environment(SharedModelContainer.router)
            } else {
                LegacyContentView()
            }
        }
    }
}

/// Receives remote notifications so CloudKit changes are fetched promptly.
final class AppDelegate: NSObject, UIApplicationDelegate {
    func application(
        _ application: UIApplication,
        didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
    ) -> Bool {
        application.registerForRemoteNotifications()
        return true
    }

    func application(
        _ application: UIApplication,
        didReceiveRemoteNotification userInfo: [AnyHashable: Any]
    ) async -> UIBackgroundFetchResult {
        guard #available(iOS 17.0, *) else { return .noData }
        do {
            let report = try await SharedModelContainer.syncService.sync()
            return report.changedCount > 0 ? .newData : .noData
        } catch {
            return .failed
        }
    }
}
