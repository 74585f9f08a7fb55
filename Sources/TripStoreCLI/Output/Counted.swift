/// A count and its noun, singular for one: "1 object", "3 objects".
func counted(_ n: Int, _ noun: String) -> String {
    "\(n) \(noun)\(n == 1 ? "" : "s")"
}
