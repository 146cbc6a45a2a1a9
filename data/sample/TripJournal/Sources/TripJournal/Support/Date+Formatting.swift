import Foundation

extension Date {
    /// "12 Mar 2026" in the current locale.
    var shortTripDate: String {
        formatted(.dateTime.day().month(.abbreviated).year())
    }

    /// The start of the calendar day, in the user's calendar.
    var startOfDay: Date {
        Calendar.current.startOfDay(for: self)
    }
}

extension ClosedRange where Bound == Date {
    /// "12–18 Mar 2026", using an interval format.
    var tripRangeDescription: String {
        (lowerBound..<upperBound).formatted(.interval.day().month(.abbreviated).year())
    }

    /// The number of nights between the bounds, never negative.
    var nightCount: Int {
        let days = Calendar.current.dateComponents([.day], from: lowerBound.startOfDay, to: upperBound.startOfDay).day ?? 0
        return max(days, 0)
    }
}

extension Duration {
    /// Debounce interval for search fields.
    static let searchDebounce: Duration = .milliseconds(300)
}
