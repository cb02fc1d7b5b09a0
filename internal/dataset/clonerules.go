package dataset

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The clone strategy's copy rules: an allow-list of Keycloak's tables and
// columns (26.0 to 26.7), read against the database's schema before
// anything is copied. A table or column of the schema that the list does
// not name stops the clone with an error naming it: a Keycloak newer than
// this list may keep something in it that a copy must not share (a
// secret, an id, a name), so kcbench refuses rather than guess.

// colRule is what a copy does with one column.
type colRule uint8

const (
	// ruleKeep copies the value as it is: flags, numbers, settings,
	// provider names.
	ruleKeep colRule = iota + 1
	// ruleID is the row's own id: a copy gets a fresh one. Rows are
	// found by it (a root id) and the ids of the rows found belong to
	// the tenant.
	ruleID
	// ruleRef holds the id of another row: remapped when that row is the
	// tenant's, kept when it is shared (the master realm's, the orgs
	// mode's realm's). The tenant's rows are found through these.
	ruleRef
	// ruleValue is free text or a setting: an id of the tenant is
	// remapped, a name of the template tenant (exactly: its realm, client,
	// role, group, user names, emails, domain, the URLs Keycloak derives
	// from the realm name) becomes the copy's; any other value that names
	// the template tenant stops the clone; anything else is kept.
	ruleValue
	// ruleSecret is a client secret: the copy's own (Spec.ClientSecret)
	// for kcbench's clients, a fresh random one of the same shape for
	// Keycloak's own (the broker client of every realm).
	ruleSecret
	// ruleFresh is a random value nothing references (a domain's row id,
	// the email constraint of a user without email): a fresh UUID; an
	// email constraint holding the email is treated as a value.
	ruleFresh
	// ruleTime is a creation or modification time in milliseconds: the
	// copy's, as if made when it was written.
	ruleTime
	// ruleHash is a password credential's secret data (hash and salt):
	// kept (shared salts) or the copy's user's own (unique salts).
	ruleHash
	// ruleConfig is a component's config value: a key provider's secrets
	// are renewed (see keyRules), other values are treated as values.
	ruleConfig
	// ruleIDsIn is text holding ids of other rows (a role policy's
	// config: JSON naming its roles by id): every id of the tenant in it
	// is remapped, then the text is treated as a value.
	ruleIDsIn
	// ruleOwn holds the id of a row that belongs to this one (an
	// organization's internal group, which before 26.2 names its
	// organization nowhere but in its name): remapped like a reference,
	// and the row it names is the tenant's.
	ruleOwn
)

// tableKind says whether a table's rows are copied.
type tableKind uint8

const (
	// tableCopy: the tenant's rows are copied, by the column rules.
	tableCopy tableKind = iota + 1
	// tableSkip: never copied: sessions, events, cluster and schema
	// bookkeeping, runtime state.
	tableSkip
	// tableNone: features kcbench's tenants do not use (brokered
	// users' links, user federation, user-managed permission tickets,
	// consents, verifiable credentials): the template must have no rows there,
	// else the clone stops naming the table.
	tableNone
)

type tableRules struct {
	kind tableKind
	cols map[string]colRule
}

// copyRuleText is the allow-list: per table, "-" (skip), "none", or
// "rule:col,col rule:col,…" for every column of every supported
// Keycloak version (columns absent from a version are ignored).
var copyRuleText = map[string]string{
	// Sessions, events, bookkeeping, runtime state.
	"admin_event_entity": "-", "auth_session": "-", "root_auth_session": "-", "cluster_event": "-",
	"databasechangelog": "-", "databasechangeloglock": "-", "event_entity": "-", "jgroups_ping": "-",
	"jgroupsping": "-", "login_failure": "-", "username_login_failure": "-", "migration_model": "-",
	"offline_client_session": "-", "offline_user_session": "-", "outbox_entry": "-", "revoked_token": "-",
	"server_config": "-", "single_use_object": "-", "workflow_state": "-", "client_node_registrations": "-",

	// Features a kcbench tenant does not use.
	"broker_link": "none", "client_initial_access": "none",
	"fed_issued_ver_credential": "none", "fed_user_attribute": "none", "fed_user_consent": "none",
	"fed_user_consent_cl_scope": "none", "fed_user_credential": "none", "fed_user_group_membership": "none",
	"fed_user_required_action": "none", "fed_user_role_mapping": "none", "fed_user_ver_credential": "none",
	"federated_user":        "none",
	"issued_ver_credential": "none", "org_invitation": "none", "resource_server_perm_ticket": "none", "user_consent": "none",
	"user_consent_client_scope": "none", "user_federation_config": "none", "user_federation_mapper": "none",
	"user_federation_mapper_config": "none", "user_federation_provider": "none", "user_ver_credential": "none",

	// What a tenant is made of.
	"realm": "id:id ref:master_admin_client,browser_flow,registration_flow,direct_grant_flow,reset_credentials_flow,client_auth_flow,docker_auth_flow,default_role " +
		"value:name,display_name " +
		"keep:access_code_lifespan,user_action_lifespan,access_token_lifespan,account_theme,admin_theme,email_theme,enabled,events_enabled,events_expiration," +
		"login_theme,not_before,password_policy,registration_allowed,remember_me,reset_password_allowed,social,ssl_required,sso_idle_timeout,sso_max_lifespan," +
		"update_profile_on_soc_login,verify_email,login_lifespan,internationalization_enabled,default_locale,reg_email_as_username,admin_events_enabled," +
		"admin_events_details_enabled,edit_username_allowed,otp_policy_counter,otp_policy_window,otp_policy_period,otp_policy_digits,otp_policy_alg," +
		"otp_policy_type,offline_session_idle_timeout,revoke_refresh_token,access_token_life_implicit,login_with_email_allowed,duplicate_emails_allowed," +
		"refresh_token_max_reuse,allow_user_managed_access,sso_max_lifespan_remember_me,sso_idle_timeout_remember_me",
	"realm_attribute":            "ref:realm_id keep:name value:value",
	"realm_default_groups":       "ref:realm_id,group_id",
	"realm_enabled_event_types":  "ref:realm_id keep:value",
	"realm_events_listeners":     "ref:realm_id keep:value",
	"realm_localizations":        "ref:realm_id keep:locale value:texts",
	"realm_required_credential":  "ref:realm_id keep:type,form_label,input,secret",
	"realm_smtp_config":          "ref:realm_id keep:name value:value",
	"realm_supported_locales":    "ref:realm_id keep:value",
	"authentication_flow":        "id:id ref:realm_id value:alias,description keep:provider_id,top_level,built_in",
	"authentication_execution":   "id:id ref:realm_id,flow_id,auth_flow_id,auth_config value:alias keep:authenticator,requirement,priority,authenticator_flow",
	"authenticator_config":       "id:id ref:realm_id value:alias",
	"authenticator_config_entry": "ref:authenticator_id keep:name value:value",
	"required_action_provider":   "id:id ref:realm_id keep:alias,name,enabled,default_action,provider_id,priority",
	"required_action_config":     "ref:required_action_id keep:name value:value",
	"component":                  "id:id ref:parent_id,realm_id value:name keep:provider_id,provider_type,sub_type",
	"component_config":           "id:id ref:component_id keep:name config:value",
	"client": "id:id ref:realm_id value:client_id,name,base_url,management_url,root_url,description secret:secret,registration_token " +
		"time:created_timestamp,last_modified_timestamp " +
		"keep:enabled,full_scope_allowed,not_before,public_client,bearer_only,surrogate_auth_required,protocol,node_rereg_timeout,frontchannel_logout," +
		"consent_required,service_accounts_enabled,client_authenticator_type,standard_flow_enabled,implicit_flow_enabled,direct_access_grants_enabled," +
		"always_display_in_console",
	"client_attributes":         "ref:client_id keep:name value:value",
	"client_auth_flow_bindings": "ref:client_id,flow_id keep:binding_name",
	"redirect_uris":             "ref:client_id value:value",
	"web_origins":               "ref:client_id value:value",
	"client_scope":              "id:id ref:realm_id value:name,description keep:protocol",
	"client_scope_attributes":   "ref:scope_id keep:name value:value",
	"client_scope_client":       "ref:client_id,scope_id keep:default_scope",
	"client_scope_role_mapping": "ref:scope_id,role_id",
	"default_client_scope":      "ref:realm_id,scope_id keep:default_scope",
	"protocol_mapper":           "id:id ref:client_id,client_scope_id value:name keep:protocol,protocol_mapper_name",
	"protocol_mapper_config":    "ref:protocol_mapper_id keep:name value:value",
	"scope_mapping":             "ref:client_id,role_id",
	"keycloak_role":             "id:id ref:realm_id,client,realm,client_realm_constraint value:name,description keep:client_role",
	"role_attribute":            "id:id ref:role_id keep:name value:value",
	"composite_role":            "ref:composite,child_role",
	"keycloak_group":            "id:id ref:parent_group,realm_id,org_id value:name,description keep:type time:created_timestamp,last_modified_timestamp",
	"group_attribute":           "id:id ref:group_id keep:name value:value",
	"group_role_mapping":        "ref:role_id,group_id",
	"user_entity": "id:id ref:realm_id,federation_link,service_account_client_link value:email,first_name,last_name,username fresh:email_constraint " +
		"keep:email_verified,enabled,not_before time:created_timestamp,last_modified_timestamp",
	"user_attribute":        "id:id ref:user_id keep:name,long_value_hash,long_value_hash_lower_case value:value,long_value",
	"user_group_membership": "ref:group_id,user_id keep:membership_type",
	"user_required_action":  "ref:user_id keep:required_action",
	"user_role_mapping":     "ref:role_id,user_id",
	"credential":            "id:id ref:user_id keep:salt,type,user_label,credential_data,priority,version time:created_date hash:secret_data",
	"org":                   "id:id own:group_id ref:realm_id value:name,alias,description,redirect_url keep:enabled",
	"org_domain":            "fresh:id ref:org_id value:name keep:verified",

	// Identity providers (seed --broker-users): the tenant realm's
	// provider of the dataset's identity-provider realm.
	"identity_provider": "id:internal_id ref:realm_id,first_broker_login_flow_id,post_broker_login_flow_id,organization_id " +
		"value:provider_alias,provider_display_name keep:enabled,provider_id,store_token,authenticate_by_default,add_token_role,trust_email,link_only,hide_on_login",
	"identity_provider_config": "ref:identity_provider_id keep:name value:value",
	"identity_provider_mapper": "id:id ref:realm_id value:name,idp_alias keep:idp_mapper_name",
	"idp_mapper_config":        "ref:idp_mapper_id keep:name value:value",
	// A linked user's link: the provider's user (subject and name) is the
	// same for every tenant in realms mode, the tenant's own in orgs mode.
	"federated_identity": "ref:user_id,realm_id value:identity_provider,federated_user_id,federated_username keep:token",

	// Authorization services (seed --uma-resources): a resource server
	// has its client's id.
	"resource_server":          "id:id keep:allow_rs_remote_mgmt,policy_enforce_mode,decision_strategy",
	"resource_server_resource": "id:id ref:resource_server_id,owner value:name,type,icon_uri,display_name keep:owner_managed_access",
	"resource_server_scope":    "id:id ref:resource_server_id value:name,icon_uri,display_name",
	"resource_server_policy":   "id:id ref:resource_server_id,owner value:name,description keep:type,decision_strategy,logic",
	"policy_config":            "ref:policy_id keep:name idsin:value",
	"associated_policy":        "ref:policy_id,associated_policy_id",
	"resource_policy":          "ref:resource_id,policy_id",
	"scope_policy":             "ref:scope_id,policy_id",
	"resource_scope":           "ref:resource_id,scope_id",
	"resource_uris":            "ref:resource_id value:value",
	"resource_attribute":       "id:id ref:resource_id keep:name value:value",
}

var ruleNames = map[string]colRule{
	"keep": ruleKeep, "id": ruleID, "ref": ruleRef, "value": ruleValue, "secret": ruleSecret,
	"fresh": ruleFresh, "time": ruleTime, "hash": ruleHash, "config": ruleConfig, "own": ruleOwn,
	"idsin": ruleIDsIn,
}

// copyRules parses copyRuleText (once).
var copyRules = sync.OnceValue(func() map[string]tableRules {
	out := make(map[string]tableRules, len(copyRuleText))
	for table, text := range copyRuleText {
		switch text {
		case "-":
			out[table] = tableRules{kind: tableSkip}
			continue
		case "none":
			out[table] = tableRules{kind: tableNone}
			continue
		}
		tr := tableRules{kind: tableCopy, cols: map[string]colRule{}}
		for _, part := range strings.Fields(text) {
			name, cols, ok := strings.Cut(part, ":")
			r, known := ruleNames[name]
			if !ok || !known {
				panic(fmt.Sprintf("copy rules of %s: bad part %q", table, part))
			}
			for _, c := range strings.Split(cols, ",") {
				if _, dup := tr.cols[c]; dup {
					panic(fmt.Sprintf("copy rules of %s: column %s twice", table, c))
				}
				tr.cols[c] = r
			}
		}
		out[table] = tr
	}
	return out
})

// applyRules gives every table of the schema its copy rules, or fails
// naming the tables and columns the allow-list does not know.
func applyRules(schema string, tables []*dbTable) error {
	rules := copyRules()
	var unknown []string
	for _, t := range tables {
		tr, ok := rules[t.name]
		if !ok {
			unknown = append(unknown, "table "+t.name)
			continue
		}
		t.kind = tr.kind
		if tr.kind != tableCopy {
			continue
		}
		t.rules = make([]colRule, len(t.cols))
		for i, c := range t.cols {
			r, ok := tr.cols[c]
			if !ok {
				unknown = append(unknown, "column "+t.name+"."+c)
				continue
			}
			t.rules[i] = r
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("clone: Keycloak's schema %q has %s, which kcbench's copy rules do not know (a newer Keycloak?): a copy could share or miss what it holds; use --strategy fast",
			schema, strings.Join(unknown, ", "))
	}
	return nil
}

// Key providers. A copy must not share a key with its template, so every
// key provider's config entry is known: renewed (a secret) or kept (a
// setting). A key provider or entry not listed stops the clone.

// keyAction is what a copy does with a key provider's config entry.
type keyAction uint8

const (
	keyKeep    keyAction = iota + 1
	keyRSAPriv           // a fresh RSA private key (PKCS#8, base64), the pair's
	keyRSACert           // its self-signed certificate (base64 DER)
	keySecret            // random bytes of the old size (base64url)
	keyKID               // a fresh key id
)

// keyProviderType is the component provider type of realm keys.
const keyProviderType = "org.keycloak.keys.KeyProvider"

var keySettings = map[string]keyAction{"priority": keyKeep, "enabled": keyKeep, "active": keyKeep, "algorithm": keyKeep,
	"keySize": keyKeep, "secretSize": keyKeep, "keyUse": keyKeep}

var keyRules = map[string]map[string]keyAction{
	"rsa-generated":     {"privateKey": keyRSAPriv, "certificate": keyRSACert},
	"rsa-enc-generated": {"privateKey": keyRSAPriv, "certificate": keyRSACert},
	"rsa":               {"privateKey": keyRSAPriv, "certificate": keyRSACert},
	"rsa-enc":           {"privateKey": keyRSAPriv, "certificate": keyRSACert},
	"hmac-generated":    {"secret": keySecret, "kid": keyKID},
	"aes-generated":     {"secret": keySecret, "kid": keyKID},
}

// keyEntry is the action for entry of key provider provider.
func keyEntry(provider, entry string) (keyAction, error) {
	rules, ok := keyRules[provider]
	if !ok {
		return 0, fmt.Errorf("clone: the template has key provider %q, whose secrets kcbench cannot renew (a copy would share its keys); use --strategy fast", provider)
	}
	if a, ok := rules[entry]; ok {
		return a, nil
	}
	if a, ok := keySettings[entry]; ok {
		return a, nil
	}
	return 0, fmt.Errorf("clone: key provider %q has config entry %q, which kcbench does not know to be a setting or a secret; use --strategy fast", provider, entry)
}
