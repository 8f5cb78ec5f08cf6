// PCRE2 from the system (Debian libpcre2-dev), 8-bit code units: the regular expressions of
// blackbox_exporter modules (RE2 syntax), matched within a match limit.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

// pcre2.h names its functions through macros Swift does not import; these name them plainly.
static inline pcre2_code_8 *rx_pcre2_compile(
    const uint8_t *pattern, size_t length, uint32_t options, int *error, size_t *offset) {
    return pcre2_compile_8(pattern, length, options, error, offset, NULL);
}
static inline void rx_pcre2_code_free(pcre2_code_8 *code) { pcre2_code_free_8(code); }
static inline int rx_pcre2_error_message(int error, uint8_t *buffer, size_t size) {
    return pcre2_get_error_message_8(error, buffer, size);
}
static inline pcre2_match_data_8 *rx_pcre2_match_data(const pcre2_code_8 *code) {
    return pcre2_match_data_create_from_pattern_8(code, NULL);
}
static inline void rx_pcre2_match_data_free(pcre2_match_data_8 *data) { pcre2_match_data_free_8(data); }
static inline size_t *rx_pcre2_ovector(pcre2_match_data_8 *data) { return pcre2_get_ovector_pointer_8(data); }
static inline uint32_t rx_pcre2_ovector_count(pcre2_match_data_8 *data) { return pcre2_get_ovector_count_8(data); }
static inline pcre2_match_context_8 *rx_pcre2_match_context(uint32_t match_limit, uint32_t depth_limit) {
    pcre2_match_context_8 *c = pcre2_match_context_create_8(NULL);
    if (c) {
        pcre2_set_match_limit_8(c, match_limit);
        pcre2_set_depth_limit_8(c, depth_limit);
    }
    return c;
}
static inline void rx_pcre2_match_context_free(pcre2_match_context_8 *c) { pcre2_match_context_free_8(c); }
static inline int rx_pcre2_match(
    const pcre2_code_8 *code, const uint8_t *subject, size_t length, pcre2_match_data_8 *data,
    pcre2_match_context_8 *context) {
    return pcre2_match_8(code, subject, length, 0, 0, data, context);
}
