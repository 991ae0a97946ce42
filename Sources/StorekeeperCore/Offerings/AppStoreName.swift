/// The store an app was installed from, as a request names it.
package enum AppStoreName: String, Codable, Sendable, CaseIterable {
  case appStore = "app_store"
  case googlePlay = "google_play"
}
