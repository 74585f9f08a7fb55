extension String {
    /// The string padded with spaces to `width` characters, for aligned columns.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
