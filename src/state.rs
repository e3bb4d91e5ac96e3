//! What every handler can reach.

use rapid_actors::auth::Auth;

pub struct AppState {
    pub auth: Auth,
    pub layers: Vec<String>,
}
