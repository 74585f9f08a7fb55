import TripStoreFormat

extension Schema {
    /// Where each entity's slots start when every entity's slots lie back to
    /// back in one flat array, with the end as one more entry. Hot loops
    /// read such arrays: taking an entity's own array out of an array of
    /// arrays retains and releases it per object, on a count that every
    /// thread reading it shares.
    var flatSlotStarts: [Int] {
        var starts = [0]
        for e in entities { starts.append(starts[starts.count - 1] + e.properties.count) }
        return starts
    }
}
