/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file export.h
 * @brief What every public header shares: symbol visibility and the default values of the
 *        argument structs that C and C++ share.
 */
#ifndef WYJIT_EXPORT_H_
#define WYJIT_EXPORT_H_

/** Marks a symbol libwyjit.so exports; everything else is hidden. */
#if defined(__GNUC__)
#define WYJIT_API __attribute__((visibility("default")))
#else
#define WYJIT_API
#endif

/**
 * A field's default in a struct shared by C and C++: a default member initializer in C++ (so a
 * default-constructed C++ struct is ready to fill), nothing in C (call the struct's *_init).
 */
#ifdef __cplusplus
#define WYJIT_DEFAULT(value) = value
#else
#define WYJIT_DEFAULT(value)
#endif

#endif /* WYJIT_EXPORT_H_ */
