import SwiftUI

/// The root view on iOS 16: a JSON-file store and an `ObservableObject` model.
@available(iOS, introduced: 16.0, deprecated: 17.0, message: "Replaced by ContentView on iOS 17")
struct LegacyContentView: View {
    @StateObject private var model = LegacyTripListModel()
    @State private var newTripName = ""
    @State private var isAdding = false

    var body: some View {
        NavigationStack {
            List {
                ForEach(model.trips) { trip in
                    NavigationLink(value: trip) {
                        TripRow(trip: trip)
                    }
                }
                .onDelete { offsets in
                    Task { await model.delete(at: offsets) }
                }
            }
            .navigationDestination(for: TripSnapshot.self) { trip in
                Text(trip.name).font(.largeTitle)
            }
            .navigationTitle("Trips")
            .searchable(text: $model.searchText)
            .overlay { if model.isLoading { ProgressView() } }
            .toolbar {
                Button("New Trip", systemImage: "plus") { isAdding = true }
            }
            .alert("New Trip", isPresented: $isAdding) {
                TextField("Name", text: $newTripName)
                Button("Add") {
                    let name = newTripName
                    newTripName = ""
                    Task { await model.add(named: name) }
                }
                Button("Cancel", role: .cancel) { }
            }
        }
        .task { await model.load() }
    }
}
