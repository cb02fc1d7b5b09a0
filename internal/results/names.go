package results

// Names that result files carry and later stages read. internal/scenario
// runs the workloads; report and sizing recognise them by these names.

// Scenario names, as internal/scenario runs them and results record them.
const (
	ScenarioPasswordGrant     = "password-grant"
	ScenarioLoginForm         = "login-form"
	ScenarioClientCredentials = "client-credentials"
	ScenarioRefresh           = "refresh"
	ScenarioIntrospect        = "introspect"
	ScenarioUserinfo          = "userinfo"
	ScenarioJWKS              = "jwks"
	ScenarioDiscovery         = "discovery"
	ScenarioLogout            = "logout"
	ScenarioOffline           = "offline"
	ScenarioAdminAPI          = "admin-api"
	ScenarioAdminSearch       = "admin-search"
	ScenarioAdminSessions     = "admin-sessions"
	ScenarioTokenExchange     = "token-exchange"
	ScenarioAdminWrite        = "admin-write"
	ScenarioAdminConsole      = "admin-console"
	ScenarioOTPLogin          = "otp-login"
	ScenarioRegistration      = "registration"
	ScenarioUMA               = "uma"
	ScenarioBrokerLogin       = "broker-login"
	ScenarioSAMLLogin         = "saml-login"
	ScenarioUserJourney       = "user-journey"
	ScenarioMix               = "mix"
)

// Operation names, as recorded and as thresholds and CPU figures name them.
const (
	OpPasswordGrant     = "password_grant"
	OpClientCredentials = "client_credentials"
	OpRefresh           = "refresh"
	OpIntrospect        = "introspect"
	OpUserinfo          = "userinfo"
	OpJWKS              = "jwks"
	OpDiscovery         = "discovery"
	OpLogout            = "logout"
	OpOfflineGrant      = "offline_grant"
	OpOfflineRefresh    = "offline_refresh"
	OpLoginPage         = "login_page"    // GET the authorization endpoint: the login form
	OpLoginSubmit       = "login_submit"  // POST the credentials: the redirect with the code
	OpCodeExchange      = "code_exchange" // the code for tokens
	OpSessionLogin      = "session_login" // a login that replaces a VU's used-up session
	OpAdminListRealms   = "admin_list_realms"
	OpAdminGetRealm     = "admin_get_realm"
	OpAdminListUsers    = "admin_list_users"
	OpAdminListOrgs     = "admin_list_orgs"
	OpAdminFindOrg      = "admin_find_org"
	OpAdminGetOrg       = "admin_get_org"
	OpAdminListMembers  = "admin_list_members"
	OpAdminSearchUsers  = "admin_search_users" // the admin console's user search
	OpAdminCountUsers   = "admin_count_users"  // the search's count
	OpAdminUsersPage    = "admin_users_page"   // a page of the user list past the first
	// admin-sessions' reads
	OpAdminSessionStats   = "admin_session_stats"   // client-session-stats: each client's session counts
	OpAdminRealmSessions  = "admin_realm_sessions"  // the console's sessions screen, first page
	OpAdminClientSessions = "admin_client_sessions" // a client's user sessions, first page
	OpTokenExchange       = "token_exchange"        // standard token exchange (RFC 8693)
	OpOTPSubmit           = "otp_submit"            // POST the one-time code: the redirect with the code
	OpRegisterPage        = "register_page"         // GET the registration form
	OpRegisterSubmit      = "register_submit"       // POST the new user: the redirect with the code
	OpUMAGrant            = "uma_grant"             // authorization services' uma-ticket grant: an RPT
	// broker-login's steps
	OpBrokerPage       = "broker_page"        // GET the realm with kc_idp_hint: redirects to the identity provider's form
	OpIdPLogin         = "idp_login"          // POST the credentials to the identity provider: the redirect back
	OpBrokerFirstLogin = "broker_first_login" // the broker endpoint, first visit: a user made and linked, the redirect with the code
	OpBrokerLogin      = "broker_login"       // the broker endpoint, a linked user: the redirect with the code
	// saml-login's steps
	OpSAMLPage  = "saml_page"  // POST the AuthnRequest to the realm's SAML endpoint: the login form
	OpSAMLLogin = "saml_login" // POST the credentials: the page posting the signed SAML response
	// admin-console's screens: each the admin requests the console sends
	// for it, at once, until the last answer
	OpConsoleUsers = "console_users" // a realm's users list
	OpConsoleUser  = "console_user"  // one user's page
	// the user's role mapping tab: its effective roles, composites
	// expanded (Keycloak 26.4 and later: recorded from their consoles)
	OpConsoleUserRoles = "console_user_roles"
	OpConsoleClients   = "console_clients" // a realm's clients list
	// admin-write's calls
	OpAdminCreateUser   = "admin_create_user"
	OpAdminUpdateUser   = "admin_update_user"
	OpAdminMapRole      = "admin_map_role" // a realm role mapped to a user
	OpAdminJoinGroup    = "admin_join_group"
	OpAdminDeleteUser   = "admin_delete_user"
	OpAdminCreateGroup  = "admin_create_group"
	OpAdminUpdateGroup  = "admin_update_group"
	OpAdminDeleteGroup  = "admin_delete_group"
	OpAdminCreateClient = "admin_create_client"
	OpAdminUpdateClient = "admin_update_client"
	OpAdminDeleteClient = "admin_delete_client"
	OpAdminGetUser      = "admin_get_user"   // a user by username
	OpAdminGetClient    = "admin_get_client" // a client by client id
)

// Phases of a point's workloads (Workload.Phase): right after a restart,
// and after a discarded warm-up.
const (
	PhaseCold = "cold"
	PhaseWarm = "warm"
)
