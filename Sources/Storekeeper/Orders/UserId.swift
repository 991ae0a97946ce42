/// The app's id for a user: its account id or a guest id it made (`guest:<uuid>`).
enum UserId {
  /// 1–128 characters, none of them a control character.
  static func isValid(_ id: String) -> Bool {
    let count = id.unicodeScalars.count
    return count >= 1 && count <= 128
      && id.unicodeScalars.allSatisfy {
        $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value)
      }
  }
}
