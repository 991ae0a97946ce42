import AppStore
import Testing

@Suite struct ReceiptDataTests {
  @Test func restoresPlusSignsAFormPostTurnedIntoSpaces() {
    #expect(ReceiptData.repair("MIIT ab/c d=") == "MIIT+ab/c+d=")
    #expect(ReceiptData.repair("MIIT ab/c/A") == "MIIT+ab/c/A=")
  }

  @Test func stripsLineBreaksAndFixesPadding() {
    #expect(ReceiptData.repair("MIIT\r\nab/c\nde") == "MIITab/cde==")
    #expect(ReceiptData.repair("QUJD\nRA") == "QUJDRA==")
  }

  @Test func acceptsTheURLSafeAlphabet() {
    #expect(ReceiptData.repair("ab-_") == "ab+/")
  }

  @Test func refusesWhatIsStillNotBase64() {
    for raw in ["", "\n", "abc%2B", "a", "ab==cd", "<receipt>", "ab\tcd"] {
      #expect(ReceiptData.repair(raw) == nil, "\(raw)")
    }
  }
}
