import SwiftUI
import SwiftData

/// Shows one trip: header, stops and journal entries.
@available(iOS 17.0, *)
struct TripDetailView: View {
    let tripID: TripID
    @Query private var matches: [Trip]
    @Environment(\.modelContext) private var context
    @State private var isEditing = false

    init(tripID: TripID) {
        self.tripID = tripID
        _matches = Query(filter: #Predicate<Trip> { $0.id == tripID })
    }

    private var trip: Trip? { matches.first }

    var body: some View {
        Group {
            if let trip {
                content(for: trip)
            } else {
                ContentUnavailableView("Trip Not Found", systemImage: "questionmark.folder",
                                       description: Text("It may have been deleted on another device."))
            }
        }
        .navigationBarTitleDisplayMode(.inline)
    }

    @ViewBuilder
    private func content(for trip: Trip) -> some View {
        List {
            Section {
                VStack(alignment: .leading, spacing: 6) {
                    Label(trip.category.label, systemImage: trip.category.symbolName)
                        .foregroundStyle(.secondary)
                    Text(trip.destination).font(.title2.bold())
                    Text(trip.dateRange.tripRangeDescription)
                        .foregroundStyle(.secondary)
                }
            }

            Section("Stops") {
                ForEach(trip.orderedStops) { stop in
                    NavigationLink(value: Route.map(tripID: trip.id, focus: stop.name)) {
                        VStack(alignment: .leading) {
                            Text(stop.name)
                            Text(stop.arrival, style: .date)
                                .font(.caption)
                                .foregroundStyle(.secondary)
                        }
                    }
                }
            }

            Section("Journal") {
                ForEach(trip.entries ?? []) { entry in
                    NavigationLink(value: Route.entry(trip: trip.id, entry: entry.id)) {
                        Text("\(entry.mood.emoji) \(entry.text)")
                            .lineLimit(2)
                    }
                }
            }
        }
        .navigationTitle(trip.name)
        .toolbar {
            ToolbarItemGroup(placement: .primaryAction) {
                Button(trip.isFavorite ? "Unfavorite" : "Favorite",
                       systemImage: trip.isFavorite ? "star.fill" : "star") {
                    trip.isFavorite.toggle()
                    trip.touch()
                }
                Button("Edit", systemImage: "pencil") { isEditing = true }
            }
        }
        .safeAreaInset(edge: .bottom) {
            Button("Add Entry", systemImage: "square.and.pencil") {
                let entry = JournalEntry(text: "")
                entry.trip = trip
                context.insert(entry)
                trip.touch()
            }
            .padding(.horizontal, 20)
            .padding(.vertical, 12)
            .floatingControlBackground()
            .padding(.bottom, 8)
        }
        .sheet(isPresented: $isEditing) {
            TripEditorView(draft: TripSnapshot(trip)) { draft in
                trip.apply(draft)
                trip.touch()
            }
        }
    }
}

#Preview {
    if #available(iOS 17.0, *) {
        NavigationStack {
            TripDetailView(tripID: UUID())
        }
        .modelContainer(SharedModelContainer.preview)
    }
}
