/// A Google Play request while Google Play is off (`GOOGLE_PLAY_PACKAGE_NAME` unset): the
/// edge answers 503 `google_play_disabled`.
package struct GooglePlayOff: Error, Equatable, Sendable {
  package init() {}
}
