/*
 * sys.rs (hmap's hand-written declarations of MIT Kerberos' GSSAPI)
 * restated for a C compiler and checked against MIT's own headers:
 * scripts/gssapi-check compiles this file with `cc -Wall -Wextra -Werror -c`
 * and links it against libgssapi_krb5.
 *
 *   CHECK_TYPE(name, type)    the type alias `name` is `type`
 *   CHECK_SIZE(type, size)    sizeof(type) is `size` bytes
 *   CHECK_FIELD(type, field, offset, field_type)
 *   CHECK_CONST(name, value)  the constant `name` is `value`
 *   CHECK_STATIC(name, type)  the library's variable `name` is a `type`
 *   CHECK_FN(name, returns, (parameters))
 *                             the function `name` assigns to a pointer of
 *                             exactly that type: a prototype that differs
 *                             in any parameter is an incompatible pointer
 *
 * The functions and variables are referenced, so that linking the object
 * against libgssapi_krb5 alone (the script does) finds each one there.
 *
 * Each line states what sys.rs declares, in C's spelling; a unit test of
 * sys.rs checks that this file states exactly that (the names, values,
 * sizes, offsets, and each Rust type spelt in C), so the two cannot drift
 * apart unnoticed. Sizes and offsets are LP64's (64-bit Linux).
 */
#include <stddef.h>
#include <stdint.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>

_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8 && sizeof(int) == 4,
               "sys.rs's layouts are LP64's");

#define CHECK_TYPE(name, type) \
    _Static_assert(_Generic((name *)0, type *: 1, default: 0), #name " is " #type)
#define CHECK_SIZE(type, size) \
    _Static_assert(sizeof(type) == (size), "sizeof(" #type ") is " #size)
#define CHECK_FIELD(type, field, offset, field_type)                            \
    _Static_assert(offsetof(type, field) == (offset)                            \
                       && _Generic(&((type *)0)->field, field_type *: 1, default: 0), \
                   #type "." #field " is a " #field_type " at " #offset)
#define CHECK_CONST(name, value) _Static_assert((name) == (value), #name " is " #value)
#define CHECK_STATIC(name, type)                                                 \
    _Static_assert(_Generic(&(name), type *: 1, default: 0), #name " is a " #type); \
    type *const hmap_check_##name = &(name)
#define CHECK_FN(name, returns, parameters) returns (*const hmap_check_##name) parameters = name

CHECK_TYPE(OM_uint32, uint32_t);
CHECK_TYPE(gss_qop_t, OM_uint32);
CHECK_TYPE(gss_cred_usage_t, int);
CHECK_TYPE(gss_name_t, struct gss_name_struct *);
CHECK_TYPE(gss_cred_id_t, struct gss_cred_id_struct *);
CHECK_TYPE(gss_ctx_id_t, struct gss_ctx_id_struct *);
CHECK_TYPE(gss_channel_bindings_t, struct gss_channel_bindings_struct *);
CHECK_TYPE(gss_buffer_t, gss_buffer_desc *);
CHECK_TYPE(gss_OID, gss_OID_desc *);
CHECK_TYPE(gss_OID_set, gss_OID_set_desc *);
CHECK_TYPE(gss_const_key_value_set_t, const gss_key_value_set_desc *);

CHECK_SIZE(gss_buffer_desc, 16);
CHECK_FIELD(gss_buffer_desc, length, 0, size_t);
CHECK_FIELD(gss_buffer_desc, value, 8, void *);
CHECK_SIZE(gss_OID_desc, 16);
CHECK_FIELD(gss_OID_desc, length, 0, OM_uint32);
CHECK_FIELD(gss_OID_desc, elements, 8, void *);
CHECK_SIZE(gss_OID_set_desc, 16);
CHECK_FIELD(gss_OID_set_desc, count, 0, size_t);
CHECK_FIELD(gss_OID_set_desc, elements, 8, gss_OID);
CHECK_SIZE(gss_key_value_element_desc, 16);
CHECK_FIELD(gss_key_value_element_desc, key, 0, const char *);
CHECK_FIELD(gss_key_value_element_desc, value, 8, const char *);
CHECK_SIZE(gss_key_value_set_desc, 16);
CHECK_FIELD(gss_key_value_set_desc, count, 0, OM_uint32);
CHECK_FIELD(gss_key_value_set_desc, elements, 8, gss_key_value_element_desc *);

CHECK_CONST(GSS_S_COMPLETE, 0);
CHECK_CONST(GSS_S_CONTINUE_NEEDED, 1);
CHECK_CONST(GSS_C_CALLING_ERROR_OFFSET, 24);
CHECK_CONST(GSS_C_ROUTINE_ERROR_OFFSET, 16);
CHECK_CONST(GSS_C_CALLING_ERROR_MASK, 255);
CHECK_CONST(GSS_C_ROUTINE_ERROR_MASK, 255);
CHECK_CONST(GSS_S_BAD_NAME, 131072);
CHECK_CONST(GSS_S_NO_CRED, 458752);
CHECK_CONST(GSS_S_CREDENTIALS_EXPIRED, 720896);
CHECK_CONST(GSS_S_FAILURE, 851968);
CHECK_CONST(GSS_C_MUTUAL_FLAG, 2);
CHECK_CONST(GSS_C_CONF_FLAG, 16);
CHECK_CONST(GSS_C_INTEG_FLAG, 32);
CHECK_CONST(GSS_C_INITIATE, 1);
CHECK_CONST(GSS_C_GSS_CODE, 1);
CHECK_CONST(GSS_C_MECH_CODE, 2);
CHECK_CONST(GSS_C_QOP_DEFAULT, 0);
CHECK_CONST(GSS_C_INDEFINITE, 4294967295);
CHECK_CONST(KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN, -1765328378);
CHECK_CONST(KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN, -1765328377);
CHECK_CONST(KRB5KDC_ERR_PREAUTH_FAILED, -1765328360);
CHECK_CONST(KRB5KRB_AP_ERR_BAD_INTEGRITY, -1765328353);
CHECK_CONST(KRB5KRB_AP_ERR_TKT_EXPIRED, -1765328352);
CHECK_CONST(KRB5_CONFIG_CANTOPEN, -1765328249);
CHECK_CONST(KRB5_CC_NOTFOUND, -1765328243);
CHECK_CONST(KRB5_REALM_UNKNOWN, -1765328230);
CHECK_CONST(KRB5_KDC_UNREACH, -1765328228);
CHECK_CONST(KRB5_KT_NOTFOUND, -1765328203);
CHECK_CONST(KRB5_FCC_NOFILE, -1765328189);
CHECK_CONST(KRB5_CONFIG_NODEFREALM, -1765328160);

CHECK_STATIC(gss_mech_krb5, const gss_OID);
CHECK_STATIC(GSS_KRB5_NT_PRINCIPAL_NAME, const gss_OID);

CHECK_FN(gss_import_name, OM_uint32, (OM_uint32 *, gss_buffer_t, gss_OID, gss_name_t *));
CHECK_FN(gss_release_name, OM_uint32, (OM_uint32 *, gss_name_t *));
CHECK_FN(gss_acquire_cred, OM_uint32,
         (OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set, gss_cred_usage_t, gss_cred_id_t *, gss_OID_set *,
          OM_uint32 *));
CHECK_FN(gss_acquire_cred_from, OM_uint32,
         (OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set, gss_cred_usage_t, gss_const_key_value_set_t,
          gss_cred_id_t *, gss_OID_set *, OM_uint32 *));
CHECK_FN(gss_inquire_cred, OM_uint32,
         (OM_uint32 *, gss_cred_id_t, gss_name_t *, OM_uint32 *, gss_cred_usage_t *, gss_OID_set *));
CHECK_FN(gss_release_cred, OM_uint32, (OM_uint32 *, gss_cred_id_t *));
CHECK_FN(gss_init_sec_context, OM_uint32,
         (OM_uint32 *, gss_cred_id_t, gss_ctx_id_t *, gss_name_t, gss_OID, OM_uint32, OM_uint32,
          gss_channel_bindings_t, gss_buffer_t, gss_OID *, gss_buffer_t, OM_uint32 *, OM_uint32 *));
CHECK_FN(gss_delete_sec_context, OM_uint32, (OM_uint32 *, gss_ctx_id_t *, gss_buffer_t));
CHECK_FN(gss_wrap, OM_uint32, (OM_uint32 *, gss_ctx_id_t, int, gss_qop_t, gss_buffer_t, int *, gss_buffer_t));
CHECK_FN(gss_unwrap, OM_uint32, (OM_uint32 *, gss_ctx_id_t, gss_buffer_t, gss_buffer_t, int *, gss_qop_t *));
CHECK_FN(gss_display_status, OM_uint32, (OM_uint32 *, OM_uint32, int, gss_OID, OM_uint32 *, gss_buffer_t));
CHECK_FN(gss_release_buffer, OM_uint32, (OM_uint32 *, gss_buffer_t));
