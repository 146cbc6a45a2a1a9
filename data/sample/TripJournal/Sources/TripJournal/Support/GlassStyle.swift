import SwiftUI

extension View {
    /// Gives floating controls the Liquid Glass material on iOS 26 and a thin material before.
    @ViewBuilder
    func floatingControlBackground<S: Shape>(in shape: S = Capsule()) -> some View {
        if #available(iOS 26.0, *) {
            self.glassEffect(.regular.interactive(), in: shape)
        } else {
            self.background(.ultraThinMaterial, in: shape)
        }
    }

    /// Applies the prominent glass button style where available.
    @ViewBuilder
    func primaryActionButtonStyle() -> some View {
        if #available(iOS 26.0, *) {
            self.buttonStyle(.glassProminent)
        } else {
            self.buttonStyle(.borderedProminent)
        }
    }
}

/// A cluster of map controls that morph into each other on iOS 26.
@available(iOS 26.0, *)
struct GlassControlCluster<Content: View>: View {
    var spacing: CGFloat = 16
    @ViewBuilder var content: () -> Content

    var body: some View {
        GlassEffectContainer(spacing: spacing) {
            HStack(spacing: spacing) {
                content()
            }
        }
    }
}
