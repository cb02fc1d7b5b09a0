package kc

// Representations: the subset of Keycloak's admin JSON kcbench reads and
// writes. Unknown fields are ignored when reading; empty ones are omitted
// when writing, so Keycloak applies its defaults.

// RealmRep is a RealmRepresentation.
type RealmRep struct {
	ID                   string            `json:"id,omitempty"`
	Realm                string            `json:"realm"`
	Enabled              *bool             `json:"enabled,omitempty"`
	DisplayName          string            `json:"displayName,omitempty"`
	PasswordPolicy       string            `json:"passwordPolicy,omitempty"`
	OrganizationsEnabled *bool             `json:"organizationsEnabled,omitempty"`
	RegistrationAllowed  *bool             `json:"registrationAllowed,omitempty"`
	Attributes           map[string]string `json:"attributes,omitempty"`
	Roles                *RolesRep         `json:"roles,omitempty"`
	Groups               []GroupRep        `json:"groups,omitempty"`
	Clients              []ClientRep       `json:"clients,omitempty"`
	Users                []UserRep         `json:"users,omitempty"`
	Organizations        []OrganizationRep `json:"organizations,omitempty"`
	DefaultRoles         []string          `json:"defaultRoles,omitempty"`
	// The realm's OTP policy (all set, or Keycloak keeps its own).
	OTPPolicyType         string `json:"otpPolicyType,omitempty"`
	OTPPolicyAlgorithm    string `json:"otpPolicyAlgorithm,omitempty"`
	OTPPolicyDigits       int    `json:"otpPolicyDigits,omitempty"`
	OTPPolicyPeriod       int    `json:"otpPolicyPeriod,omitempty"`
	OTPPolicyLookAhead    int    `json:"otpPolicyLookAheadWindow,omitempty"`
	OTPPolicyCodeReusable *bool  `json:"otpPolicyCodeReusable,omitempty"`
	// Components by provider type (e.g. org.keycloak.keys.KeyProvider),
	// as a realm export lists them.
	Components map[string][]ComponentRep `json:"components,omitempty"`
	// IdentityProviders the realm brokers.
	IdentityProviders []IdentityProviderRep `json:"identityProviders,omitempty"`
}

// IdentityProviderRep is an IdentityProviderRepresentation: a realm's
// identity provider (alias, provider such as "oidc", its settings).
type IdentityProviderRep struct {
	Alias      string            `json:"alias"`
	ProviderID string            `json:"providerId"`
	Enabled    bool              `json:"enabled"`
	TrustEmail bool              `json:"trustEmail"`
	Config     map[string]string `json:"config,omitempty"`
}

// ComponentRep is a ComponentExportRepresentation: a realm component such
// as a key provider.
type ComponentRep struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name"`
	ProviderID string              `json:"providerId"`
	SubType    string              `json:"subType,omitempty"`
	Config     map[string][]string `json:"config,omitempty"`
	// SubComponents are child components by type, in a realm import
	// (an LDAP provider's mappers).
	SubComponents map[string][]ComponentRep `json:"subComponents,omitempty"`
}

// KeyProviderType is the component type of realm keys.
const KeyProviderType = "org.keycloak.keys.KeyProvider"

// RolesRep holds realm roles and client roles by clientId.
type RolesRep struct {
	Realm  []RoleRep            `json:"realm,omitempty"`
	Client map[string][]RoleRep `json:"client,omitempty"`
}

// RoleRep is a RoleRepresentation.
type RoleRep struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	ClientRole  bool   `json:"clientRole,omitempty"`
	// Composite roles (an import's): the realm roles this one is made of.
	Composite  bool            `json:"composite,omitempty"`
	Composites *RoleComposites `json:"composites,omitempty"`
}

// RoleComposites are the roles a composite role is made of.
type RoleComposites struct {
	Realm []string `json:"realm,omitempty"`
}

// GroupRep is a GroupRepresentation.
type GroupRep struct {
	ID         string   `json:"id,omitempty"`
	Name       string   `json:"name"`
	Path       string   `json:"path,omitempty"`
	RealmRoles []string `json:"realmRoles,omitempty"`
	// SubGroups are the group's subgroups (a realm import's tree);
	// SubGroupCount how many it has (the admin API's lists).
	SubGroups     []GroupRep `json:"subGroups,omitempty"`
	SubGroupCount int        `json:"subGroupCount,omitempty"`
}

// ClientRep is a ClientRepresentation.
type ClientRep struct {
	ID                        string              `json:"id,omitempty"`
	ClientID                  string              `json:"clientId"`
	Protocol                  string              `json:"protocol,omitempty"` // "": openid-connect
	Name                      string              `json:"name,omitempty"`
	Enabled                   *bool               `json:"enabled,omitempty"`
	PublicClient              bool                `json:"publicClient"`
	Secret                    string              `json:"secret,omitempty"`
	StandardFlowEnabled       bool                `json:"standardFlowEnabled"`
	DirectAccessGrantsEnabled bool                `json:"directAccessGrantsEnabled"`
	ServiceAccountsEnabled    bool                `json:"serviceAccountsEnabled"`
	RedirectURIs              []string            `json:"redirectUris,omitempty"`
	WebOrigins                []string            `json:"webOrigins,omitempty"`
	Attributes                map[string]string   `json:"attributes,omitempty"`
	ProtocolMappers           []ProtocolMapperRep `json:"protocolMappers,omitempty"`
	// AuthorizationServicesEnabled makes the client a resource server of
	// authorization services, set up as AuthorizationSettings says (on
	// create and on realm and partial imports).
	AuthorizationServicesEnabled bool               `json:"authorizationServicesEnabled,omitempty"`
	AuthorizationSettings        *ResourceServerRep `json:"authorizationSettings,omitempty"`
}

// ResourceServerRep is a ResourceServerRepresentation: a client's
// authorization services. Policies name their resources, scopes and
// other policies, and role policies their roles, by name: an import
// resolves them.
type ResourceServerRep struct {
	PolicyEnforcementMode string             `json:"policyEnforcementMode,omitempty"`
	DecisionStrategy      string             `json:"decisionStrategy,omitempty"`
	Scopes                []AuthzScopeRep    `json:"scopes,omitempty"`
	Resources             []AuthzResourceRep `json:"resources,omitempty"`
	Policies              []AuthzPolicyRep   `json:"policies,omitempty"`
}

// AuthzScopeRep is a ScopeRepresentation of authorization services.
type AuthzScopeRep struct {
	Name string `json:"name"`
}

// AuthzResourceRep is a ResourceRepresentation of authorization services.
type AuthzResourceRep struct {
	ID     string          `json:"_id,omitempty"`
	Name   string          `json:"name"`
	Type   string          `json:"type,omitempty"`
	URIs   []string        `json:"uris,omitempty"`
	Scopes []AuthzScopeRep `json:"scopes,omitempty"`
}

// AuthzPolicyRep is a policy or permission of authorization services, as
// a resource server's export and import write it (Config's values are
// JSON text).
type AuthzPolicyRep struct {
	Name             string            `json:"name"`
	Type             string            `json:"type"`
	Logic            string            `json:"logic,omitempty"`
	DecisionStrategy string            `json:"decisionStrategy,omitempty"`
	Config           map[string]string `json:"config,omitempty"`
}

// ProtocolMapperRep is a ProtocolMapperRepresentation.
type ProtocolMapperRep struct {
	Name           string            `json:"name"`
	Protocol       string            `json:"protocol"`
	ProtocolMapper string            `json:"protocolMapper"`
	Config         map[string]string `json:"config,omitempty"`
}

// UserRep is a UserRepresentation.
type UserRep struct {
	ID            string              `json:"id,omitempty"`
	Username      string              `json:"username"`
	Enabled       bool                `json:"enabled"`
	Email         string              `json:"email,omitempty"`
	EmailVerified bool                `json:"emailVerified,omitempty"`
	FirstName     string              `json:"firstName,omitempty"`
	LastName      string              `json:"lastName,omitempty"`
	Credentials   []CredentialRep     `json:"credentials,omitempty"`
	RealmRoles    []string            `json:"realmRoles,omitempty"`
	ClientRoles   map[string][]string `json:"clientRoles,omitempty"`
	Groups        []string            `json:"groups,omitempty"`
	Attributes    map[string][]string `json:"attributes,omitempty"`
	// ServiceAccountClientID makes the user the service account of that
	// client (realm and partial imports).
	ServiceAccountClientID string `json:"serviceAccountClientId,omitempty"`
	// FederatedIdentities link the user to users of identity providers
	// (realm and partial imports).
	FederatedIdentities []FederatedIdentityRep `json:"federatedIdentities,omitempty"`
}

// FederatedIdentityRep links a user to a user of an identity provider
// (its subject and username there).
type FederatedIdentityRep struct {
	IdentityProvider string `json:"identityProvider"`
	UserID           string `json:"userId"`
	UserName         string `json:"userName"`
}

// CredentialRep is a CredentialRepresentation: either a plain Value (the
// server hashes it) or a pre-hashed SecretData/CredentialData pair (both are
// JSON documents carried as strings).
type CredentialRep struct {
	ID             string `json:"id,omitempty"`
	Type           string `json:"type"`
	Value          string `json:"value,omitempty"`
	Temporary      bool   `json:"temporary"`
	SecretData     string `json:"secretData,omitempty"`
	CredentialData string `json:"credentialData,omitempty"`
	CreatedDate    int64  `json:"createdDate,omitempty"`
}

// OrganizationRep is an OrganizationRepresentation.
type OrganizationRep struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name"`
	Alias      string              `json:"alias,omitempty"`
	Enabled    bool                `json:"enabled"`
	Domains    []OrgDomainRep      `json:"domains,omitempty"`
	Members    []OrgMemberRep      `json:"members,omitempty"`
	Attributes map[string][]string `json:"attributes,omitempty"`
	// IdentityProviders link identity providers of the realm (by alias) to
	// the organization, in a realm import.
	IdentityProviders []OrgIdPRep `json:"identityProviders,omitempty"`
}

// ClientScopeRep is a ClientScopeRepresentation.
type ClientScopeRep struct {
	ID              string              `json:"id,omitempty"`
	Name            string              `json:"name"`
	Protocol        string              `json:"protocol,omitempty"`
	Attributes      map[string]string   `json:"attributes,omitempty"`
	ProtocolMappers []ProtocolMapperRep `json:"protocolMappers,omitempty"`
}

// OrgIdPRep names an organization's identity provider.
type OrgIdPRep struct {
	Alias string `json:"alias"`
}

// OrgDomainRep is an organization's domain.
type OrgDomainRep struct {
	Name     string `json:"name"`
	Verified bool   `json:"verified,omitempty"`
}

// OrgMemberRep names a member in an inline organization.
type OrgMemberRep struct {
	ID       string `json:"id,omitempty"`
	Username string `json:"username,omitempty"`
}

// PartialImportRep is the body of POST /admin/realms/{r}/partialImport.
type PartialImportRep struct {
	IfResourceExists string      `json:"ifResourceExists"` // SKIP, OVERWRITE, FAIL
	Users            []UserRep   `json:"users,omitempty"`
	Clients          []ClientRep `json:"clients,omitempty"`
	Groups           []GroupRep  `json:"groups,omitempty"`
	Roles            *RolesRep   `json:"roles,omitempty"`
	// IdentityProviders the realm brokers.
	IdentityProviders []IdentityProviderRep `json:"identityProviders,omitempty"`
}

// PartialImportResult is partialImport's answer.
type PartialImportResult struct {
	Added       int                   `json:"added"`
	Skipped     int                   `json:"skipped"`
	Overwritten int                   `json:"overwritten"`
	Results     []PartialImportAction `json:"results"`
}

// PartialImportAction is what partialImport did with one resource.
type PartialImportAction struct {
	Action       string `json:"action"` // ADDED, SKIPPED, OVERWRITTEN
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	ID           string `json:"id"`
}

// Bool returns a pointer to b, for the optional booleans above.
func Bool(b bool) *bool { return &b }
