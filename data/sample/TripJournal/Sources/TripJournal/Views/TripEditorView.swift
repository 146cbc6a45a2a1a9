import SwiftUI

/// Edits a draft copy of a trip; changes are applied only when the user taps Save.
struct TripEditorView: View {
    @State private var draft: TripSnapshot
    @State private var companyName = ""
    @State private var validationMessage: String?
    @Environment(\.dismiss) private var dismiss

    let onSave: (TripSnapshot) -> Void

    init(draft: TripSnapshot, onSave: @escaping (TripSnapshot) -> Void) {
        _draft = State(initialValue: draft)
        self.onSave = onSave
    }

    var body: some View {
        NavigationStack {
            Form {
                Section("Trip") {
                    TextField("Name", text: $draft.name)
                    TextField("Destination", text: $draft.destination)
                        .textContentType(.addressCity)
                }
                Section("Dates") {
                    DatePicker("Start", selection: $draft.startDate, displayedComponents: .date)
                    DatePicker("End", selection: $draft.endDate, in: draft.startDate..., displayedComponents: .date)
                    LabeledContent("Nights", value: "\(draft.nights)")
                }
                Section("Kind") {
                    Picker("Kind", selection: isBusiness) {
                        Text("Leisure").tag(false)
                        Text("Business").tag(true)
                    }
                    .pickerStyle(.segmented)
                    if case .business = draft.category {
                        TextField("Company", text: $companyName)
                    }
                }
                if let validationMessage {
                    Text(validationMessage)
                        .foregroundStyle(.red)
                }
            }
            .navigationTitle(draft.name.isEmpty ? "New Trip" : draft.name)
            .navigationBarTitleDisplayMode(.inline)
            .modifier(CompanySync(draft: $draft, companyName: $companyName))
            .toolbar {
                ToolbarItem(placement: .cancellationAction) {
                    Button("Cancel") { dismiss() }
                }
                ToolbarItem(placement: .confirmationAction) {
                    Button("Save") { save() }
                        .disabled(draft.name.trimmingCharacters(in: .whitespaces).isEmpty)
                }
            }
        }
    }

    private var isBusiness: Binding<Bool> {
        Binding {
            if case .business = draft.category { return true }
            return false
        } set: { newValue in
            draft.category = newValue ? .business(company: companyName) : .leisure
        }
    }

    private func save() {
        guard draft.endDate >= draft.startDate else {
            validationMessage = "The trip can't end before it starts."
            return
        }
        onSave(draft)
        dismiss()
    }
}

/// Keeps the company name in the draft's category in step with the text field.
///
/// Uses the two-value `onChange` on iOS 17 and the deprecated single-value form on iOS 16.
private struct CompanySync: ViewModifier {
    @Binding var draft: TripSnapshot
    @Binding var companyName: String

    func body(content: Content) -> some View {
        if #available(iOS 17.0, *) {
            content.onChange(of: companyName, initial: true) { _, newValue in
                update(newValue)
            }
        } else {
            content.onChange(of: companyName) { newValue in
                update(newValue)
            }
        }
    }

    private func update(_ name: String) {
        if case .business = draft.category {
            draft.category = .business(company: name)
        }
    }
}

#Preview("New trip") {
    TripEditorView(draft: .draft()) { _ in }
}
